use vortex_model::abi::rtu::{self as rtu_abi, span};
use vortex_model::config::RtuConfig;
use vortex_model::rtu::reference::Harness;
use vortex_model::rtu::TraceRay;
use vortex_transcode::accel::testkit::Device;

#[test]
fn one_triangle() {
    let dev = Device::new(4);
    let b = dev.blas(&[(&[[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], 1)]);
    let mut h = Harness::new(&RtuConfig::default(), 32, 1);
    let ray = TraceRay {
        origin: [0.25, 0.25, 1.0],
        dir: [0.0, 0.0, -1.0],
        tmin: 0.0,
        tmax: 10.0,
        flags: 0,
        cull_mask: 0xff,
        accel: b.addr,
    };
    let rows = h.run(&dev.mem(), &[ray; 32], |_, _| (0, 0.0)).unwrap();
    for r in rows {
        assert_eq!(r.status(), rtu_abi::STS_DONE_HIT);
        assert_eq!(r.committed_f(span::T), 1.0);
    }
}
