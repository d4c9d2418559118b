//! Glob patterns over case names: `*` matches any run of characters (dots included, as in
//! dEQP's `--deqp-case` without hierarchical paths), `?` one character.

pub fn matches(pattern: &str, text: &str) -> bool {
    let p = pattern.as_bytes();
    let t = text.as_bytes();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_cross_dots() {
        assert!(matches("dEQP-VK.ray_query.builtin.*.comp.*", "dEQP-VK.ray_query.builtin.flow.comp.aabbs"));
        assert!(matches("*watertightness*", "dEQP-VK.ray_query.watertightness.nomiss.comp.aabbs"));
        assert!(!matches("*.triangles", "dEQP-VK.ray_query.builtin.flow.comp.aabbs"));
        assert!(matches("a?c", "abc"));
        assert!(matches("*", ""));
        assert!(!matches("abc", "abcd"));
    }
}
