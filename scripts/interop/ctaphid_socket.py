"""python-fido2's CtapHidDevice over `tokenmint fido2 device`'s UNIX socket
of raw 64-byte CTAPHID reports (no report-ID byte): the connection class of a
few lines any CTAP client needs. Shared by scripts/interop/ctap_device.py and
scripts/crash/pin_kill.py."""

import socket

from fido2.hid import ConnectionFailure, CtapHidDevice
from fido2.hid.base import CtapHidConnection, HidDescriptor

REPORT = 64


class SocketConnection(CtapHidConnection):
    """One host of the device: a UNIX stream socket carrying raw 64-byte
    CTAPHID reports both ways."""

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)

    def write_packet(self, data):
        if len(data) != REPORT:
            raise ValueError(f"a report is {REPORT} bytes, not {len(data)}")
        self.sock.sendall(data)

    def read_packet(self):
        buf = b""
        while len(buf) < REPORT:
            chunk = self.sock.recv(REPORT - len(buf))
            if not chunk:
                raise ConnectionFailure("the device closed the connection")
            buf += chunk
        return buf

    def close(self):
        self.sock.close()


def descriptor(path):
    return HidDescriptor(path=path, vid=0, pid=0, report_size_in=REPORT, report_size_out=REPORT,
                         product_name="TokenMint", serial_number=None)


def open_device(path):
    return CtapHidDevice(descriptor(path), SocketConnection(path))
