//! Run-time shader compilation, as dEQP does it: GLSL through glslangValidator
//! (`--target-env vulkan1.2 --target-env spirv1.4`, dEQP's SPIR-V 1.4 build option) and
//! SPIR-V assembly through spirv-as (`--target-env spv1.4`). Results are cached on disk,
//! keyed by a hash of the tool, its arguments and the source; a hit is only used when the
//! stored source is byte-identical, so a hash collision can never give a wrong module.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const GLSLANG: &str = "glslangValidator";
pub const SPIRV_AS: &str = "spirv-as";

pub struct ShaderCache {
    dir: PathBuf,
}

/// FNV-1a, 64 bits.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The cache directory: `$VORTEX_CTS_SHADER_CACHE`, else `cts-shader-cache` next to the
/// executable (inside cargo's target directory).
pub fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("VORTEX_CTS_SHADER_CACHE") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("."));
    exe.parent().unwrap_or(Path::new(".")).join("cts-shader-cache")
}

/// Checks that both tools run; the error names the missing one and how to install it.
pub fn check_tools() -> Result<(), String> {
    for (tool, arg, package) in [(GLSLANG, "--version", "glslang-tools"), (SPIRV_AS, "--version", "spirv-tools")] {
        match Command::new(tool).arg(arg).output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                return Err(format!("{tool} {arg} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr)))
            }
            Err(e) => {
                return Err(format!(
                    "{tool} is needed to build the cases' shaders at run time and was not found ({e}); \
                     install the Debian package {package} (scripts/setup-debian.sh does)"
                ))
            }
        }
    }
    Ok(())
}

impl Default for ShaderCache {
    fn default() -> Self {
        Self::new()
    }
}

impl ShaderCache {
    pub fn new() -> Self {
        ShaderCache { dir: default_cache_dir() }
    }

    pub fn glsl(&self, source: &str) -> Result<Vec<u32>, String> {
        self.build(GLSLANG, "comp", source, |src, out| {
            let mut c = Command::new(GLSLANG);
            c.args(["--target-env", "vulkan1.2", "--target-env", "spirv1.4", "-S", "comp", "-o"]).arg(out).arg(src);
            c
        })
    }

    pub fn spirv_asm(&self, source: &str) -> Result<Vec<u32>, String> {
        self.build(SPIRV_AS, "spvasm", source, |src, out| {
            let mut c = Command::new(SPIRV_AS);
            c.args(["--target-env", "spv1.4", "-o"]).arg(out).arg(src);
            c
        })
    }

    fn build(
        &self,
        tool: &str,
        ext: &str,
        source: &str,
        command: impl Fn(&Path, &Path) -> Command,
    ) -> Result<Vec<u32>, String> {
        let key = format!("{:016x}", fnv1a(&[tool.as_bytes(), ext.as_bytes(), source.as_bytes()]));
        let src_path = self.dir.join(format!("{key}.{ext}"));
        let spv_path = self.dir.join(format!("{key}.spv"));
        if let (Ok(stored), Ok(spv)) = (std::fs::read_to_string(&src_path), std::fs::read(&spv_path)) {
            if stored == source {
                return words(&spv);
            }
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        // Unique temporaries, then rename: several worker processes share the cache.
        let tmp = format!("{}.{}", std::process::id(), key);
        let tmp_src = self.dir.join(format!("tmp-{tmp}.{ext}"));
        let tmp_spv = self.dir.join(format!("tmp-{tmp}.spv"));
        std::fs::write(&tmp_src, source).map_err(|e| format!("cannot write {}: {e}", tmp_src.display()))?;
        let out = command(&tmp_src, &tmp_spv).output().map_err(|e| {
            format!("cannot run {tool} ({e}); install it (glslang-tools / spirv-tools, see scripts/setup-debian.sh)")
        })?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&tmp_src);
            return Err(format!(
                "{tool} rejected the shader ({}):\n{}{}\n--- source ---\n{source}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let spv = std::fs::read(&tmp_spv).map_err(|e| format!("cannot read {}: {e}", tmp_spv.display()))?;
        // The .spv first: a reader only trusts the pair once the source is in place too.
        let _ = std::fs::rename(&tmp_spv, &spv_path);
        let _ = std::fs::rename(&tmp_src, &src_path);
        words(&spv)
    }
}

fn words(bytes: &[u8]) -> Result<Vec<u32>, String> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(format!("a SPIR-V module of {} bytes is malformed", bytes.len()));
    }
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}
