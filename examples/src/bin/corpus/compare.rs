//! Comparing what two drivers wrote: bit for bit, or floats within a tolerance taken from
//! the Vulkan specification's precision requirements for the operations involved.

use crate::spec::{Check, Rule};

/// Compares `got` with `want` under `check`; `Err` describes the first mismatches.
pub fn compare(check: &Check, want: &[u8], got: &[u8]) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!("`{}`: {} bytes, the reference has {}", check.key, got.len(), want.len()));
    }
    let (start, end) = check.range.unwrap_or((0, want.len()));
    if start > end || end > want.len() {
        return Err(format!("`{}`: checked range {start}..{end} outside {} bytes", check.key, want.len()));
    }
    let (w, g) = (&want[start..end], &got[start..end]);
    let mut bad = Vec::new();
    let mut count = 0;
    match &check.rule {
        Rule::Exact => {
            // Counted and reported by aligned 32-bit word, which is easier to read.
            let mut last = usize::MAX;
            for (i, (a, b)) in w.iter().zip(g).enumerate() {
                let at = (start + i) & !3;
                if a != b && at != last {
                    last = at;
                    count += 1;
                    if bad.len() < 4 {
                        let word = |v: &[u8]| {
                            let s = &v[at..(at + 4).min(v.len())];
                            s.iter().rev().map(|b| format!("{b:02x}")).collect::<String>()
                        };
                        bad.push(format!("word at byte {at}: 0x{} (reference 0x{})", word(got), word(want)));
                    }
                }
            }
        }
        Rule::Float { bits, ulp, abs, rel } => {
            let n = (*bits / 8) as usize;
            for (i, (a, b)) in w.chunks_exact(n).zip(g.chunks_exact(n)).enumerate() {
                let (x, y) = (float(a, *bits), float(b, *bits));
                if !close(x, y, ordered(a, *bits), ordered(b, *bits), *ulp, *abs, *rel) {
                    count += 1;
                    if bad.len() < 4 {
                        bad.push(format!("f{bits} #{} (byte {}): {y:e}, reference {x:e}", i, start + i * n));
                    }
                }
            }
        }
    }
    if count == 0 {
        Ok(())
    } else {
        Err(format!("`{}`: {count} mismatches: {}", check.key, bad.join("; ")))
    }
}

fn float(b: &[u8], bits: u32) -> f64 {
    match bits {
        16 => f16_to_f64(u16::from_le_bytes([b[0], b[1]])),
        32 => f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
        _ => f64::from_le_bytes(b.try_into().expect("8 bytes")),
    }
}

/// The float's bits mapped to a line where adjacent floats differ by one (for ULP distance).
fn ordered(b: &[u8], bits: u32) -> i64 {
    let (v, sign_bit) = match bits {
        16 => (u16::from_le_bytes([b[0], b[1]]) as u64, 1u64 << 15),
        32 => (u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64, 1u64 << 31),
        _ => (u64::from_le_bytes(b.try_into().expect("8 bytes")), 1u64 << 63),
    };
    let mag = (v & (sign_bit - 1)) as i64;
    if v & sign_bit != 0 {
        -mag
    } else {
        mag
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as f64;
    sign * match e {
        0 => m * 2f64.powi(-24),
        0x1F if m == 0.0 => f64::INFINITY,
        0x1F => f64::NAN,
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

#[allow(clippy::too_many_arguments)]
fn close(want: f64, got: f64, ow: i64, og: i64, ulp: Option<u64>, abs: Option<f64>, rel: Option<f64>) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if ow == og || want == got {
        return true;
    }
    if want.is_infinite() || got.is_infinite() {
        return false;
    }
    ulp.is_some_and(|u| ow.abs_diff(og) <= u)
        || abs.is_some_and(|a| (want - got).abs() <= a)
        || rel.is_some_and(|r| (want - got).abs() <= r * want.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(rule: Rule) -> Check {
        Check { key: "k".into(), rule, range: None }
    }

    #[test]
    fn exact_and_float_rules() {
        let a = 1.0f32.to_le_bytes();
        let b = f32::from_bits(1.0f32.to_bits() + 2).to_le_bytes();
        assert!(compare(&check(Rule::Exact), &a, &a).is_ok());
        assert!(compare(&check(Rule::Exact), &a, &b).is_err());
        let ulp = |u| Rule::Float { bits: 32, ulp: Some(u), abs: None, rel: None };
        assert!(compare(&check(ulp(2)), &a, &b).is_ok());
        assert!(compare(&check(ulp(1)), &a, &b).is_err());
        // -0 and +0 are one apart on the ordered line and equal as values.
        assert!(compare(&check(ulp(0)), &0.0f32.to_le_bytes(), &(-0.0f32).to_le_bytes()).is_ok());
        let nan = f32::NAN.to_le_bytes();
        assert!(compare(&check(ulp(0)), &nan, &f32::from_bits(0x7FC0_0001).to_le_bytes()).is_ok());
        assert!(compare(&check(ulp(9)), &nan, &a).is_err());
        let abs = Rule::Float { bits: 16, ulp: None, abs: Some(0.01), rel: None };
        assert!(compare(&check(abs), &0x3C00u16.to_le_bytes(), &0x3C01u16.to_le_bytes()).is_ok());
    }
}
