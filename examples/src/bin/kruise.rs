//! `kruise`: the OpenKruise command-line tool of kruise-rs. See `kruise --help`.

fn main() -> std::process::ExitCode {
    kruise_cli::app::main()
}
