//! A recorded dispatch is a DCR-write + start stream, and the queue's command processor plays
//! it into the model: checked on the stream itself and on what the kernel did.

use std::sync::Arc;
use vortex_model::abi::csr;
use vortex_model::abi::dcr;
use vortex_model::abi::isa::{AtomicOp, Instr, MemSize, Op, REG_NONE as N};
use vortex_model::abi::kernel::{build_image, kargs, KernelHeader};
use vortex_runtime::cmd::CommandBuffer;
use vortex_runtime::device::{Device, Gpu};
use vortex_runtime::memory::Memory;
use vortex_runtime::pipeline::{BindPoint, Compute, Kind, Pipeline, PipelineLayout};
use vortex_runtime::queue::Submission;
use vortex_runtime::stream::StreamOp;
use vortex_runtime::sync::Fence;
use vortex_runtime::vk;

/// A kernel that adds 1 to the u32 whose address is push constant 0, once per thread.
fn counting_pipeline(device: &Device, local: [u32; 3]) -> Pipeline {
    let r = |op, m, d, a, b, imm| Instr::r(op, m, d, a, b, N, N, imm);
    let code = vec![
        r(Op::Csr, 0, 0, N, N, csr::PARAM_LO),
        r(Op::Csr, 0, 1, N, N, csr::PARAM_HI),
        r(Op::Ldg, MemSize::B64 as u8, 2, 0, N, kargs::PUSH as u32),
        r(Op::Movi, 0, 4, N, N, 1),
        r(Op::Atomg, AtomicOp::Add as u8, N, 2, 4, 0),
        r(Op::Exit, 0, N, N, N, 0),
    ];
    let header = KernelHeader { kernel_id: device.kernel_id(), ..KernelHeader::new(5, local) };
    let image = build_image(header, &code, "count");
    let kernel = Memory::allocate(&device.space, image.len() as u64).unwrap();
    device.space.snapshot().write(kernel.address(0), &image).unwrap();
    Pipeline {
        layout: Arc::new(PipelineLayout::new(vec![], 8).unwrap()),
        name: "count".into(),
        kind: Kind::Compute(Compute { kernel, local_size: local, lmem_bytes: 0 }),
    }
}

#[test]
fn dispatch_is_dcr_writes_then_start_and_runs() {
    let device = Device::new(&Gpu::from_env().unwrap()).unwrap();
    let counter = Memory::allocate(&device.space, 64).unwrap();
    let pipe = Arc::new(counting_pipeline(&device, [8, 4, 1]));
    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_pipeline(BindPoint::Compute, pipe.clone());
    cb.push_constants(0, &counter.address(0).to_le_bytes());
    cb.dispatch([0; 3], [3, 2, 1]);
    cb.end().unwrap();
    let rec = cb.recording().unwrap();

    // The stream: DCR writes of the whole KMU state and the RTU config, then START, last.
    let dcrs: Vec<(u32, u32)> = rec
        .ops
        .iter()
        .filter_map(|op| if let StreamOp::Dcr { addr, value } = op { Some((*addr, *value)) } else { None })
        .collect();
    assert!(matches!(rec.ops.last(), Some(StreamOp::Start { .. })), "the stream ends with START");
    for a in dcr::KMU_STATE_BEGIN..=dcr::KMU_STATE_END {
        assert!(dcrs.iter().any(|d| d.0 == a), "{} is not written", dcr::name(a));
    }
    let get = |a| dcrs.iter().rev().find(|d| d.0 == a).unwrap().1;
    assert_eq!(
        get(dcr::KMU_PC_LO) as u64 | (get(dcr::KMU_PC_HI) as u64) << 32,
        pipe.as_compute().unwrap().kernel_address()
    );
    assert_eq!([get(dcr::KMU_GRID_DIM_X), get(dcr::KMU_GRID_DIM_Y), get(dcr::KMU_GRID_DIM_Z)], [3, 2, 1]);
    assert_eq!(get(dcr::KMU_BLOCK_SIZE), 32);
    assert_eq!(
        [get(dcr::KMU_WARP_STEP_X), get(dcr::KMU_WARP_STEP_Y), get(dcr::KMU_WARP_STEP_Z)],
        dcr::warp_step(device.config.num_threads, [8, 4, 1])
    );
    assert!(dcrs.iter().any(|d| d.0 == dcr::RTU_CONFIG));

    // Played by the queue: 6 CTAs x 32 threads each add one.
    let fence = Arc::new(Fence::new(false));
    device
        .queue
        .submit(Submission {
            waits: vec![],
            recordings: vec![rec.clone()],
            signals: vec![],
            fence: Some(fence.clone()),
        })
        .unwrap();
    assert!(fence.wait(None));
    device.check().unwrap();
    assert_eq!(device.space.snapshot().read_u32(counter.address(0)).unwrap(), 6 * 32);

    // A command buffer can be submitted again: its kernel arguments stay resident.
    device.queue.submit(Submission { waits: vec![], recordings: vec![rec], signals: vec![], fence: None }).unwrap();
    device.wait_idle().unwrap();
    assert_eq!(device.space.snapshot().read_u32(counter.address(0)).unwrap(), 12 * 32);
}

#[test]
fn a_fault_marks_the_device_lost_and_signals_the_fence() {
    let device = Device::new(&Gpu::from_env().unwrap()).unwrap();
    let pipe = Arc::new(counting_pipeline(&device, [1, 1, 1]));
    let cb = CommandBuffer::new(device.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_pipeline(BindPoint::Compute, pipe);
    cb.push_constants(0, &0xdead_0000u64.to_le_bytes());
    cb.dispatch([0; 3], [1, 1, 1]);
    cb.end().unwrap();
    let fence = Arc::new(Fence::new(false));
    let rec = cb.recording().unwrap();
    device
        .queue
        .submit(Submission { waits: vec![], recordings: vec![rec], signals: vec![], fence: Some(fence.clone()) })
        .unwrap();
    assert!(fence.wait(None), "the fence of a faulting batch is still signalled");
    assert_eq!(device.check(), Err(vk::Result::ERROR_DEVICE_LOST));
    let reason = device.lost_reason().unwrap();
    assert!(reason.contains("0xdead0000") && reason.contains("kernel 'count'"), "{reason}");
}

#[test]
fn dispatch_without_a_pipeline_is_a_recording_error() {
    let device = Device::new(&Gpu::from_env().unwrap()).unwrap();
    let cb = CommandBuffer::new(device, vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.dispatch([0; 3], [1, 1, 1]);
    assert!(cb.end().is_err(), "vkEndCommandBuffer reports the sticky error");
    assert!(cb.recording().is_none());
}
