//! Serialization, compaction-style copies and the compatibility check of rdna2 structures:
//! a blob carries its layout's UUID, a device of the other architecture refuses it, and a
//! deserialized TLAS's instance nodes point at the relocated BLASes.

use vortex_model::config::{Box16, RtArch};
use vortex_model::isect::walk::{closest, WalkRay};
use vortex_transcode::accel::serial;
use vortex_transcode::accel::testkit::{translate, Device, InstanceDesc};

#[test]
fn rdna2_blobs_round_trip_and_name_their_layout() {
    let dev = Device::rdna2(Box16::Auto);
    let uuid = *b"test driver uuid";
    let tri: &[[[f32; 3]; 3]] = &[[[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]];
    let blas = dev.blas(&[(tri, 1)]);
    let tlas = dev.tlas(&[InstanceDesc::new(blas.addr, translate(0.0, 0.0, -5.0))]);
    let p = serial::properties(&dev.mem(), tlas.addr).unwrap();
    assert_eq!(p.blas_pointers, 1);
    let mut blob = vec![0u8; p.serialized as usize];
    serial::serialize(&dev.mem(), tlas.addr, &mut blob, &uuid).unwrap();
    assert_eq!(&blob[16..32], &serial::COMPAT_UUID_RDNA2);
    assert!(serial::compatible_on(&blob, &uuid, RtArch::Rdna2));
    assert!(!serial::compatible_on(&blob, &uuid, RtArch::Rtu), "an RTU device refuses an rdna2 blob");
    // A CW-BVH blob the other way round.
    let cw = Device::new(4);
    let cb = cw.blas(&[(tri, 1)]);
    let mut cblob = vec![0u8; serial::properties(&cw.mem(), cb.addr).unwrap().serialized as usize];
    serial::serialize(&cw.mem(), cb.addr, &mut cblob, &uuid).unwrap();
    assert!(serial::compatible_on(&cblob, &uuid, RtArch::Rtu) && !serial::compatible_on(&cblob, &uuid, RtArch::Rdna2));
    // Relocate the BLAS (a byte copy: rdna2 structures are position independent), point the
    // blob's handle at the copy, deserialize: the TLAS traces the copy.
    let size = blas.stats.bytes;
    let copy = dev.alloc(size + 256);
    let mut bytes = vec![0u8; size as usize];
    dev.mem().read(blas.addr, &mut bytes).unwrap();
    dev.mem().write(copy, &bytes).unwrap();
    dev.mem().write(blas.addr, &vec![0u8; size as usize]).unwrap();
    blob[serial::HEADER_BYTES..serial::HEADER_BYTES + 8].copy_from_slice(&copy.to_le_bytes());
    let dst = dev.alloc(tlas.stats.bytes);
    serial::deserialize(&blob, &dev.mem(), dst, tlas.stats.bytes, &uuid).unwrap();
    let r = WalkRay { org: [0.0, 0.0, 5.0], dir: [0.0, 0.0, -1.0], tmin: 0.0, tmax: 100.0, cull_mask: 0xFF };
    let (h, _) = closest(&dev.mem(), dst, &r, 1 << 16).unwrap();
    assert_eq!(h.map(|h| (h.t, h.inst)), Some((10.0, 0)));
    // A blob whose UUID names the other layout than its bytes is refused.
    let mut lie = blob.clone();
    lie[16..32].copy_from_slice(&serial::COMPAT_UUID);
    assert!(serial::deserialize(&lie, &dev.mem(), dst, tlas.stats.bytes, &uuid).is_err());
}
