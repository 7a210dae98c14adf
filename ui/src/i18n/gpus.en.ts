// English strings of a box's GPUs as the public and market pages show them (issue 38): the nearby
// details' GPU table, the install and rent dialogs' marks and reasons. Spread into en.ts. The
// console's GPU words (verification, live use) load with its pages: components/devices/gpuText.ts.
export const enGpus = {
  gpu_free_of: '{free} of {total} free',
  gpu_vram: 'VRAM',
  gpu_driver: 'Driver',
  gpu_cuda: 'CUDA',
  gpu_compute_capability: 'Compute capability',
  gpu_mig: 'MIG',
  gpu_mig_on: 'On',
  gpu_mig_off: 'Off',
  gpu_verified: 'Verified',
  gpu_unverified: 'Not verified yet',
  gpu_failed: 'Failed verification',
  offer_gpus_free: '{free} of {total} GPUs free',
  offer_cuda: 'CUDA {cuda}',
  fit_no_free_gpu: 'All its GPUs are taken',
  fit_cuda_too_old: 'Its CUDA is too old for this app',
  fit_gpu_failed_check: 'A GPU failed its last check: not offered for GPU apps',
  fit_no_gpu_runtime: "Its Docker has no NVIDIA runtime",
  fit_other: 'Cannot take this app now ({reason})',
  gap_cuda: 'CUDA: needs {need}, the box runs {have}',
};
