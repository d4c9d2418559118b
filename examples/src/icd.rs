//! Which Vulkan driver the examples talk to. The loader picks drivers from the environment
//! when an instance is created, so the choice is made by pointing `VK_DRIVER_FILES` (and
//! the older `VK_ICD_FILENAMES`) at one manifest before the loader is used.

use crate::error::{Error, Result};
use std::env;
use std::path::{Path, PathBuf};

/// Mesa's lavapipe as Debian installs it.
pub const LAVAPIPE_MANIFEST: &str = "/usr/share/vulkan/icd.d/lvp_icd.json";

/// Our ICD's manifest, relative to the repository root.
const VORTEX_MANIFEST: &str = "json/vortex_icd.json";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Icd {
    /// Vortex RT, from `json/vortex_icd.json` in this repository.
    Vortex,
    /// Mesa's lavapipe, the independent oracle.
    Lavapipe,
    /// Any other loader manifest.
    Manifest(PathBuf),
}

impl Icd {
    /// Parses the value of `--icd`: `vortex`, `lavapipe` or a path to a manifest.
    pub fn parse(value: &str) -> Self {
        match value {
            "vortex" => Icd::Vortex,
            "lavapipe" => Icd::Lavapipe,
            path => Icd::Manifest(PathBuf::from(path)),
        }
    }

    /// Parses a command line made of `--icd VALUE` / `--icd=VALUE` (default: vortex).
    /// `Ok(None)` means help was asked for.
    pub fn from_args(mut args: impl Iterator<Item = String>) -> std::result::Result<Option<Icd>, String> {
        let mut icd = Icd::Vortex;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "-h" | "--help" => return Ok(None),
                "--icd" => icd = Icd::parse(&args.next().ok_or("--icd needs a value")?),
                _ => match arg.strip_prefix("--icd=") {
                    Some(value) => icd = Icd::parse(value),
                    None => return Err(format!("unexpected argument {arg:?}")),
                },
            }
        }
        Ok(Some(icd))
    }

    /// The absolute path of the manifest, checked to exist.
    pub fn manifest(&self) -> Result<PathBuf> {
        let path = match self {
            Icd::Vortex => vortex_manifest()?,
            Icd::Lavapipe => PathBuf::from(LAVAPIPE_MANIFEST),
            Icd::Manifest(path) => path.clone(),
        };
        if !path.is_file() {
            return Err(Error::msg(format!("ICD manifest {} does not exist (or is not a file)", path.display())));
        }
        path.canonicalize().map_err(|e| Error::msg(format!("cannot resolve ICD manifest {}: {e}", path.display())))
    }
}

/// Looks for our manifest next to the source tree this binary was built from, then under
/// the current directory (for a binary copied elsewhere and run from a checkout).
fn vortex_manifest() -> Result<PathBuf> {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".."));
    let from_source = repository.join(VORTEX_MANIFEST);
    let from_cwd = PathBuf::from(VORTEX_MANIFEST);
    if from_source.is_file() {
        return Ok(from_source);
    }
    if from_cwd.is_file() {
        return Ok(from_cwd);
    }
    Err(Error::msg(format!(
        "the Vortex ICD manifest was not found (looked at {} and ./{VORTEX_MANIFEST}); \
         build the ICD first, or pass --icd lavapipe",
        from_source.display()
    )))
}

/// Restricts the Vulkan loader to the driver described by `manifest`.
///
/// Must run before the loader enumerates drivers, and before the process starts other
/// threads (it writes the process environment).
pub fn restrict_loader_to(manifest: &Path) {
    env::set_var("VK_DRIVER_FILES", manifest);
    env::set_var("VK_ICD_FILENAMES", manifest);
    // Extra drivers would be added on top of the ones selected above.
    env::remove_var("VK_ADD_DRIVER_FILES");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_paths() {
        assert_eq!(Icd::parse("vortex"), Icd::Vortex);
        assert_eq!(Icd::parse("lavapipe"), Icd::Lavapipe);
        assert_eq!(Icd::parse("x/y.json"), Icd::Manifest(PathBuf::from("x/y.json")));
    }

    #[test]
    fn missing_manifest_is_a_clear_error() {
        let err = Icd::parse("/nonexistent.json").manifest().unwrap_err();
        assert!(err.to_string().contains("/nonexistent.json does not exist"), "{err}");
    }
}
