// Chinese strings of a box's GPUs (public and market pages), spread into zh.ts; the type makes a
// missing key a compile error.
import type { enGpus } from './gpus.en';

export const zhGpus: Record<keyof typeof enGpus, string> = {
  gpu_free_of: '{total} 块中 {free} 块空闲',
  gpu_vram: '显存',
  gpu_driver: '驱动',
  gpu_cuda: 'CUDA',
  gpu_compute_capability: '计算能力',
  gpu_mig: 'MIG',
  gpu_mig_on: '开启',
  gpu_mig_off: '关闭',
  gpu_verified: '已验证',
  gpu_unverified: '尚未验证',
  gpu_failed: '验证未通过',
  offer_gpus_free: '{total} 块 GPU 中 {free} 块空闲',
  offer_cuda: 'CUDA {cuda}',
  fit_no_free_gpu: '它的 GPU 已全部被占用',
  fit_cuda_too_old: '它的 CUDA 版本过低，无法运行此应用',
  fit_gpu_failed_check: '有 GPU 未通过最近一次检测，暂不提供给 GPU 应用',
  fit_no_gpu_runtime: '它的 Docker 没有 NVIDIA 运行时',
  fit_other: '暂时无法运行此应用（{reason}）',
  gap_cuda: 'CUDA：需要 {need}，设备为 {have}',
};
