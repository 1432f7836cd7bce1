/// mimalloc instead of glibc's allocator: the service and the builds allocate many small,
/// short-lived values (rows, JSON), where glibc spent a third of the build's time consolidating
/// free lists (perf, `cargo xtask bench market`); see docs/BENCHMARKS.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    terrace_gateway::cli::main(std::env::args().skip(1).collect())
}
