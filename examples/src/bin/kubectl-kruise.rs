//! `kubectl-kruise`: `kruise` as a kubectl plugin (`kubectl kruise ...` finds it on `PATH`). The same
//! program; its help names it `kubectl kruise`.

fn main() -> std::process::ExitCode {
    kruise_cli::app::main()
}
