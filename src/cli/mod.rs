//! Command-line definitions (clap). Parsing only: flags become a Plan in `args`.
