//! `apiary`: a Kubernetes API server. See `apiary --help`.

fn main() -> std::process::ExitCode {
    apiary_smol::main()
}
