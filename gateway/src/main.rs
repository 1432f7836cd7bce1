fn main() -> std::process::ExitCode {
    terrace_gateway::cli::main(std::env::args().skip(1).collect())
}
