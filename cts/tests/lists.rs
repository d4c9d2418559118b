//! The generated case names equal dEQP's exact case lists of stages C0, C1 and C2
//! (`lists/`, copied from the real deqp-vk), name for name.

use std::collections::BTreeSet;
use vortex_cts::case::{all_cases, Stage};

#[test]
fn generated_names_equal_the_deqp_lists() {
    let cases = all_cases();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "duplicate case names");
    for stage in Stage::ALL {
        let want: BTreeSet<&str> = stage.list().lines().filter(|l| !l.is_empty()).collect();
        let got: BTreeSet<&str> = names.iter().copied().filter(|n| Stage::of(n) == stage).collect();
        let missing: Vec<_> = want.difference(&got).take(5).collect();
        let extra: Vec<_> = got.difference(&want).take(5).collect();
        assert!(missing.is_empty() && extra.is_empty(), "{}: missing {missing:?}, extra {extra:?}", stage.name());
        assert_eq!(got.len(), want.len());
    }
    assert_eq!(names.len(), 43 + 270 + 3217);
}
