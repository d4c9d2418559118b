//! Command-buffer recording: each bind point keeps its own state, resets clear it, and the
//! device-timeline jobs (events, queries, secondary buffers) take effect when the queue
//! plays them; failed jobs are device faults of the right kind.

use std::sync::Arc;
use vortex_model::abi::dcr;
use vortex_model::abi::isa::{Instr, Op, REG_NONE as N};
use vortex_model::abi::kernel::{build_image, kargs, KernelHeader};
use vortex_runtime::accel::AccelStruct;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::cmd::{BufferCopy, CommandBuffer};
use vortex_runtime::descriptor::{DescriptorSet, SetLayout};
use vortex_runtime::device::{Device, Gpu};
use vortex_runtime::memory::Memory;
use vortex_runtime::pipeline::{BindPoint, Compute, Kind, Pipeline, PipelineLayout};
use vortex_runtime::query::QueryPool;
use vortex_runtime::queue::Submission;
use vortex_runtime::stream::{Recording, StreamOp};
use vortex_runtime::sync::Event;
use vortex_runtime::vk;

fn device() -> Arc<Device> {
    Device::new(&Gpu::from_env().unwrap()).unwrap()
}

/// A set layout with one dynamic storage buffer.
fn dynamic_layout() -> Arc<SetLayout> {
    Arc::new(SetLayout::new(vec![(0, vk::DescriptorType::STORAGE_BUFFER_DYNAMIC, 1)]))
}

/// A kernel that only exits, behind a layout with one dynamic-buffer set.
fn empty_pipeline(device: &Device) -> Arc<Pipeline> {
    let code = vec![Instr::r(Op::Exit, 0, N, N, N, N, N, 0)];
    let header = KernelHeader { kernel_id: device.kernel_id(), ..KernelHeader::new(1, [1, 1, 1]) };
    let image = build_image(header, &code, "empty");
    let kernel = Memory::allocate(&device.space, image.len() as u64).unwrap();
    device.space.snapshot().write(kernel.address(0), &image).unwrap();
    Arc::new(Pipeline {
        layout: Arc::new(PipelineLayout::new(vec![Some(dynamic_layout())], 16).unwrap()),
        name: "empty".into(),
        kind: Kind::Compute(Compute { kernel, local_size: [1, 1, 1], lmem_bytes: 0 }),
    })
}

fn set(device: &Device) -> Arc<DescriptorSet> {
    Arc::new(DescriptorSet::new(&device.space, dynamic_layout()).unwrap())
}

fn recording(cb: &CommandBuffer) -> Arc<Recording> {
    cb.end().unwrap();
    cb.recording().unwrap()
}

/// The kernel-argument block of the recording's last dispatch.
fn last_kargs(device: &Device, rec: &Recording) -> Vec<u8> {
    let dcr = |a| {
        rec.ops.iter().rev().find_map(|op| match op {
            StreamOp::Dcr { addr, value } if *addr == a => Some(*value as u64),
            _ => None,
        })
    };
    let param = dcr(dcr::KMU_PARAM_LO).unwrap() | dcr(dcr::KMU_PARAM_HI).unwrap() << 32;
    let mut k = vec![0; kargs::BYTES];
    device.space.snapshot().read(param, &mut k).unwrap();
    k
}

fn u32_at(k: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(k[at..at + 4].try_into().unwrap())
}

fn u64_at(k: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(k[at..at + 8].try_into().unwrap())
}

fn play(device: &Device, recordings: Vec<Arc<Recording>>) {
    device.queue.submit(Submission { waits: vec![], recordings, signals: vec![], fence: None }).unwrap();
    let _ = device.wait_idle();
}

#[test]
fn each_bind_point_keeps_its_own_sets_and_push_constants_are_shared() {
    let device = device();
    let (compute, graphics, rt) = (set(&device), set(&device), set(&device));
    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_sets(BindPoint::Compute, 0, vec![Some(compute.clone())], &[64]);
    cb.push_constants(4, &7u32.to_le_bytes());
    cb.bind_pipeline(BindPoint::Compute, empty_pipeline(&device));
    // Binding elsewhere after the compute state is set must not disturb it.
    cb.bind_sets(BindPoint::Graphics, 0, vec![Some(graphics.clone())], &[128]);
    cb.bind_sets(BindPoint::RayTracing, 0, vec![Some(rt.clone())], &[192]);
    cb.push_constants(8, &9u32.to_le_bytes());
    cb.dispatch([0; 3], [1, 1, 1]);
    let rec = recording(&cb);
    let k = last_kargs(&device, &rec);
    assert_eq!(u64_at(&k, kargs::SET_ADDR), compute.address(), "the compute bind point's set");
    assert_eq!(u32_at(&k, kargs::DYN_OFFSETS), 64, "its dynamic offset");
    assert_eq!([u32_at(&k, kargs::PUSH + 4), u32_at(&k, kargs::PUSH + 8)], [7, 9], "push constants are shared");
}

#[test]
fn a_pipeline_of_another_kind_is_refused_at_its_bind_point() {
    let device = device();
    let p = empty_pipeline(&device);
    for bp in [BindPoint::Graphics, BindPoint::RayTracing] {
        let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
        cb.begin();
        cb.bind_pipeline(bp, p.clone());
        assert_eq!(cb.end(), Err(vk::Result::ERROR_UNKNOWN), "a compute pipeline at {bp:?}");
    }
    // At its own bind point it is accepted.
    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_pipeline(BindPoint::Compute, p.clone());
    cb.dispatch([0; 3], [1, 1, 1]);
    assert!(cb.end().is_ok());
}

#[test]
fn begin_and_reset_clear_every_bind_point() {
    let device = device();
    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_pipeline(BindPoint::Compute, empty_pipeline(&device));
    cb.bind_sets(BindPoint::Compute, 0, vec![Some(set(&device))], &[64]);
    cb.push_constants(0, &5u32.to_le_bytes());
    cb.dispatch([0; 3], [1, 1, 1]);
    recording(&cb);
    cb.begin();
    cb.dispatch([0; 3], [1, 1, 1]);
    assert!(cb.end().is_err(), "the pipeline did not survive vkBeginCommandBuffer");
    cb.reset();
    cb.begin();
    cb.bind_pipeline(BindPoint::Compute, empty_pipeline(&device));
    cb.dispatch([0; 3], [1, 1, 1]);
    let k = last_kargs(&device, &recording(&cb));
    assert_eq!(u64_at(&k, kargs::SET_ADDR), 0, "no set bound since the reset");
    assert_eq!(u32_at(&k, kargs::PUSH), 0, "push constants cleared");
}

#[test]
fn events_queries_and_secondary_buffers_act_when_played() {
    let device = device();
    let mem = Arc::new(Memory::allocate(&device.space, 4096).unwrap());
    let buf = Arc::new(Buffer::new(4096, vk::BufferUsageFlags::TRANSFER_DST));
    buf.bind(mem.clone(), 0).unwrap();
    let event = Arc::new(Event::new());
    let pool = Arc::new(QueryPool::new(vk::QueryType::TIMESTAMP, 2, Default::default()));

    let secondary = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::SECONDARY);
    secondary.begin();
    secondary.fill_buffer(&buf, 0, 16, 0xabcd_0123);
    let secondary = recording(&secondary);

    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.reset_queries(pool.clone(), 0, 2);
    cb.write_timestamp(pool.clone(), 1);
    cb.set_event(event.clone());
    cb.execute(secondary);
    cb.copy_buffer(&buf, &buf, &[BufferCopy { src_offset: 0, dst_offset: 64, size: 16 }]);
    let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY;
    cb.copy_query_results(pool.clone(), 0, 2, &buf, 256, 16, flags);
    let rec = recording(&cb);
    let names: Vec<_> = rec.ops.iter().map(|op| op.name()).collect();
    assert_eq!(names, ["QUERY_RESET", "QUERY_WRITE", "SET_EVENT", "DMA_FILL", "DMA_COPY", "QUERY_COPY"]);
    assert_eq!(event.status(), vk::Result::EVENT_RESET, "nothing happens at record time");

    play(&device, vec![rec]);
    device.check().unwrap();
    assert_eq!(event.status(), vk::Result::EVENT_SET);
    let m = device.space.snapshot();
    assert_eq!(m.read_u32(buf.address() + 64 + 12).unwrap(), 0xabcd_0123, "the secondary's fill ran first");
    let at = buf.address() + 256;
    assert_eq!([m.read_u64(at).unwrap(), m.read_u64(at + 8).unwrap()], [0, 0], "query 0 unavailable");
    assert!(m.read_u64(at + 16).unwrap() > 0, "query 1 has a time");
    assert_eq!(m.read_u64(at + 24).unwrap(), 1, "and is available");

    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.reset_event(event.clone());
    play(&device, vec![recording(&cb)]);
    assert_eq!(event.status(), vk::Result::EVENT_RESET);
}

#[test]
fn query_results_into_unmapped_memory_are_a_memory_fault() {
    let device = device();
    let mem = Arc::new(Memory::allocate(&device.space, 4096).unwrap());
    let buf = Arc::new(Buffer::new(4096, vk::BufferUsageFlags::TRANSFER_DST));
    buf.bind(mem, 0).unwrap();
    let pool = Arc::new(QueryPool::new(vk::QueryType::TIMESTAMP, 1, Default::default()));
    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    // Past the allocation, in the unmapped gap that follows every region.
    cb.copy_query_results(pool, 0, 1, &buf, 8192, 8, vk::QueryResultFlags::TYPE_64);
    play(&device, vec![recording(&cb)]);
    let reason = device.lost_reason().expect("the device is lost");
    assert!(reason.contains("(memory fault)") && reason.contains("query results destination"), "{reason}");
}

#[test]
fn copying_a_structure_without_memory_is_a_structure_fault() {
    let device = device();
    let unbound = Arc::new(Buffer::new(4096, vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR));
    let ty = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
    let src = Arc::new(AccelStruct::new(unbound.clone(), 0, 4096, ty).unwrap());
    let dst = Arc::new(AccelStruct::new(unbound, 0, 4096, ty).unwrap());
    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.copy_accel(src, dst);
    play(&device, vec![recording(&cb)]);
    let reason = device.lost_reason().expect("the device is lost");
    assert!(reason.contains("(bad acceleration structure)") && reason.contains("copy source"), "{reason}");
}
