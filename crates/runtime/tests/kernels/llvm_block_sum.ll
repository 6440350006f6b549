; LLVM IR for a kernel compiled by the LLVM NVPTX back end (the PTX dialect clang emits):
;   llc -march=nvptx64 -mcpu=sm_70 -mattr=+ptx64 llvm_block_sum.ll -o llvm_block_sum.ptx
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [64 x float] undef, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare void @llvm.nvvm.barrier0()
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)

; out[block] = sum over the block of (a * x[i] + y[i]); also counts elements with atomics.
define void @block_saxpy_sum(float addrspace(1)* %x, float addrspace(1)* %y, float addrspace(1)* %out, i32 addrspace(1)* %count, float %a, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %load, label %store
load:
  %xp = getelementptr float, float addrspace(1)* %x, i32 %i
  %yp = getelementptr float, float addrspace(1)* %y, i32 %i
  %xv = load float, float addrspace(1)* %xp, align 4
  %yv = load float, float addrspace(1)* %yp, align 4
  %m = fmul float %a, %xv
  %s = fadd float %m, %yv
  %old = atomicrmw add i32 addrspace(1)* %count, i32 1 seq_cst
  br label %store
store:
  %v = phi float [ %s, %load ], [ 0.0, %entry ]
  %tp = getelementptr [64 x float], [64 x float] addrspace(3)* @tile, i32 0, i32 %tid
  store float %v, float addrspace(3)* %tp, align 4
  call void @llvm.nvvm.barrier0()
  %lane_lt32 = icmp ult i32 %tid, 32
  br i1 %lane_lt32, label %reduce, label %done
reduce:
  %tid32 = add i32 %tid, 32
  %tp2 = getelementptr [64 x float], [64 x float] addrspace(3)* @tile, i32 0, i32 %tid32
  %v0 = load float, float addrspace(3)* %tp, align 4
  %v1 = load float, float addrspace(3)* %tp2, align 4
  %r0 = fadd float %v0, %v1
  %s16 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %r0, i32 16, i32 31)
  %r1 = fadd float %r0, %s16
  %s8 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %r1, i32 8, i32 31)
  %r2 = fadd float %r1, %s8
  %s4 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %r2, i32 4, i32 31)
  %r3 = fadd float %r2, %s4
  %s2 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %r3, i32 2, i32 31)
  %r4 = fadd float %r3, %s2
  %s1 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %r4, i32 1, i32 31)
  %r5 = fadd float %r4, %s1
  %is0 = icmp eq i32 %tid, 0
  br i1 %is0, label %write, label %done
write:
  %op = getelementptr float, float addrspace(1)* %out, i32 %bid
  store float %r5, float addrspace(1)* %op, align 4
  br label %done
done:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, float addrspace(1)*, float addrspace(1)*, i32 addrspace(1)*, float, i32)* @block_saxpy_sum, !"kernel", i32 1}
