//! GLSL compiled at run time with glslangValidator (Debian: glslang-tools), for the checks
//! whose shaders are short enough to read next to the code that draws with them.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// SPIR-V words of a GLSL shader of `stage` (glslang's file suffix: `vert`, `frag`, `comp`,
/// `rgen`, ...), for Vulkan 1.2.
pub fn compile(stage: &str, source: &str) -> Result<Vec<u32>, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("vortex-glsl-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = compile_in(&dir, stage, source);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn compile_in(dir: &std::path::Path, stage: &str, source: &str) -> Result<Vec<u32>, String> {
    let src = dir.join(format!("shader.{stage}"));
    let out = dir.join(format!("{stage}.spv"));
    std::fs::write(&src, source).map_err(|e| format!("{}: {e}", src.display()))?;
    let run = Command::new("glslangValidator")
        .args(["--target-env", "vulkan1.2", "-V"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .map_err(|e| format!("glslangValidator (Debian: glslang-tools): {e}"))?;
    if !run.status.success() {
        return Err(format!("glslangValidator: {}", String::from_utf8_lossy(&run.stdout)));
    }
    let bytes = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}
