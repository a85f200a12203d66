//! The application: runs a plan, prints and writes results.
