//! Integration tests: one binary, driving the real `ioscope` executable.
mod it;
