//! Keeps docs/ISA.md and docs/DCR.md true to `model::abi`: every opcode, CSR and DCR the
//! contract defines must be documented; and docs/TIMING.md's configuration file parses.

use vortex_model::abi::{csr, dcr, isa::Op};

fn doc(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/");
    std::fs::read_to_string(format!("{path}{name}")).unwrap_or_else(|e| panic!("docs/{name}: {e}"))
}

#[test]
fn isa_doc_lists_every_opcode() {
    let isa = doc("ISA.md");
    for op in Op::ALL {
        let row = format!("| `{:#04x}` | `{}` |", *op as u8, op.mnemonic());
        assert!(isa.contains(&row), "docs/ISA.md has no row `{row}`");
    }
}

#[test]
fn isa_doc_lists_every_csr() {
    let isa = doc("ISA.md");
    for id in 0..0x1000 {
        if let Some(name) = csr::name(id) {
            let base = name.split('.').next().unwrap();
            assert!(isa.contains(&format!("`{base}")), "docs/ISA.md does not document CSR {name} ({id:#x})");
        }
    }
}

#[test]
fn dcr_doc_lists_every_register() {
    let d = doc("DCR.md");
    for a in 0..dcr::DCR_COUNT {
        let name = dcr::name(a);
        if name == "DCR_UNKNOWN" {
            continue;
        }
        let stem = name.trim_end_matches("_LO").trim_end_matches("_HI");
        let stem = stem.strip_suffix("_X").or(stem.strip_suffix("_Y")).or(stem.strip_suffix("_Z")).unwrap_or(stem);
        assert!(d.contains(stem), "docs/DCR.md does not document {name} ({a:#x})");
    }
}

/// The configuration file shown in docs/TIMING.md §3 is one the model accepts, and shows the
/// watchdog's defaults.
#[test]
fn timing_doc_configuration_parses() {
    let t = doc("TIMING.md");
    let start = t.find("```toml\n").expect("docs/TIMING.md has a toml block") + "```toml\n".len();
    let block = &t[start..start + t[start..].find("```").expect("the toml block ends")];
    let c = vortex_model::config::DeviceConfig::from_toml(block).unwrap_or_else(|e| panic!("docs/TIMING.md: {e}"));
    let d = vortex_model::config::DeviceConfig::default();
    assert_eq!((c.watchdog_idle_ms, c.watchdog_ms), (d.watchdog_idle_ms, d.watchdog_ms), "docs/TIMING.md");
}
