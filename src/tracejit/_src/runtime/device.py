"""What every device answers as JAX's devices do, whichever kind it is: the plugin's devices
(`client.Device`), the NumPy evaluator's (`dispatch.NumpyDevice`) and other processes'
(`distributed.RemoteDevice`). Each sets `id`, `platform`, `device_kind` and `process_index`;
this module imports nothing, so the NumPy platform loads no plugin machinery for it."""


class DeviceBase:
    __slots__ = ()

    @property
    def host_id(self) -> int:
        return self.process_index

    @property
    def task_id(self) -> int:
        return self.process_index

    def memory_stats(self) -> None:
        """None, as JAX's CPU devices answer: host memory has no device allocator to report."""

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"
