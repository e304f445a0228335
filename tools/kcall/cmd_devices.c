/*
 * cmd_devices.c — `kcall devices`.
 */
#include <string.h>

#include "cli.h"

static void print_device(const kc_device_properties* p) {
  char name[48];
  kc_device_format(p->device, name, sizeof name);
  printf("%s: %s\n", name, p->name);
  if (p->device.device_type == kDLCPU) {
    printf("  cores: %d, memory: %.1f GiB\n", (int)p->multiprocessor_count,
           (double)p->total_memory_bytes / (1024.0 * 1024.0 * 1024.0));
    return;
  }
  printf("  compute capability %d.%d, %d multiprocessors, %.1f GiB\n",
         (int)p->compute_capability_major, (int)p->compute_capability_minor,
         (int)p->multiprocessor_count,
         (double)p->total_memory_bytes / (1024.0 * 1024.0 * 1024.0));
  printf("  driver %d.%d, runtime %d.%d, PCI bus %d device %d\n",
         (int)p->driver_version / 1000, (int)p->driver_version % 1000 / 10,
         (int)p->runtime_version / 1000, (int)p->runtime_version % 1000 / 10,
         (int)p->pci_bus_id, (int)p->pci_device_id);
}

static int run_devices(int argc, char** argv) {
  if (argc > 0) {
    return cli_usage_error(&cli_cmd_devices, "unexpected argument %s",
                           CLI_QS(argv[0]));
  }
  kc_device_properties p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  kc_status* st = kc_device_get_properties(kc_device_cpu(), &p);
  if (st) return cli_report_status(st);
  print_device(&p);
  int32_t count = 0;
  st = kc_device_get_count(kDLCUDA, &count);
  if (st) {
    /* No CUDA is an answer, not a failure of the command. */
    printf("cuda: %s\n", kc_status_get_message(st));
    kc_status_destroy(st);
    return CLI_EXIT_OK;
  }
  for (int32_t i = 0; i < count; ++i) {
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    st = kc_device_get_properties((DLDevice){kDLCUDA, i}, &p);
    if (st) return cli_report_status(st);
    print_device(&p);
  }
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_devices = {
    "devices",
    "list the devices kcall can run on",
    "usage: kcall devices\n"
    "\n"
    "Lists the CPU and every CUDA device with its properties. Where CUDA\n"
    "cannot be used, says why on a line 'cuda: no CUDA device: ...' (the\n"
    "CUDA backend library, the driver or a device is missing). The CUDA\n"
    "backend is looked for at KCALL_CUDA_BACKEND, beside libkcall, then on\n"
    "the loader's path.\n",
    run_devices,
};
