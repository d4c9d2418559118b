//! `vortex-cts`: see `vortex_cts::runner::cli::USAGE`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(vortex_cts::runner::cli::main(args));
}
