"""Resource probes of issue 13 (items 1 and 2) against a running Terrace, reported as JSON.

Not a test (its figures depend on the machine): docs/BENCHMARKS.md, "Security probes", gives
the command and the figures. It reads the server's resident memory from /proc/PID/status.

1. Sign-in flood: N concurrent wrong-password POST /hub/login (each with its own CSRF cookie),
   then one more wave; reports the statuses, the peak RSS, and how long a GET /healthz took
   during the flood.
2. Slow bodies: N connections each sending the headers of a 1 MB POST and then all of the body
   but its last byte, then holding; reports the peak RSS, how many connections the server cut
   and when.

usage: security_probe.py BASE_URL PID EMAIL [--flood N] [--slow N] [--key API_KEY]
(without --key the slow bodies carry unknown keys, which are refused before the body is read)
"""

import asyncio
import json
import re
import sys
import time

import httpx2 as httpx


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Peak:
    def __init__(self, pid: int):
        self.pid, self.peak, self.start = pid, rss_mb(pid), rss_mb(pid)
        self.running = True

    async def watch(self):
        while self.running:
            self.peak = max(self.peak, rss_mb(self.pid))
            await asyncio.sleep(0.05)


async def flood(base: str, pid: int, email: str, n: int) -> dict:
    peak = Peak(pid)
    watcher = asyncio.create_task(peak.watch())
    statuses: dict[int, int] = {}

    async def one(i: int):
        async with httpx.AsyncClient(timeout=120) as c:
            page = await c.get(f"{base}/hub/login")
            m = re.search(r'name="csrf" value="([^"]+)"', page.text)
            form = {"email": email, "password": f"wrong password {i}", "csrf": m.group(1) if m else ""}
            r = await c.post(f"{base}/hub/login", data=form)
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1

    t0 = time.monotonic()
    tasks = [asyncio.create_task(one(i)) for i in range(n)]
    await asyncio.sleep(0.2)
    async with httpx.AsyncClient(timeout=120) as c:
        h0 = time.monotonic()
        await c.get(f"{base}/healthz")
        health_ms = (time.monotonic() - h0) * 1000
    await asyncio.gather(*tasks)
    took = time.monotonic() - t0
    peak.running = False
    await watcher
    return {
        "attempts": n,
        "statuses": statuses,
        "seconds": round(took, 2),
        "healthz_ms_during": round(health_ms, 1),
        "rss_mb_before": round(peak.start, 1),
        "rss_mb_peak": round(peak.peak, 1),
    }


async def slow_bodies(host: str, port: int, pid: int, n: int, hold: float, key: str | None) -> dict:
    peak = Peak(pid)
    watcher = asyncio.create_task(peak.watch())
    size = 1_000_000
    cut: list[float] = []
    t0 = time.monotonic()

    async def one(i: int):
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            cut.append(0.0)
            return
        head = (
            f"POST /v1/address/resolve HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key or f'trc_probe{i}'}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
        )
        try:
            writer.write(head.encode())
            chunk = b" " * 65536
            sent = 0
            while sent < size - 1:
                part = chunk[: min(len(chunk), size - 1 - sent)]
                writer.write(part)
                await writer.drain()
                sent += len(part)
            data = await asyncio.wait_for(reader.read(1024), timeout=hold)
            cut.append(time.monotonic() - t0 if data is not None else -1)
        except (asyncio.TimeoutError, ConnectionError, OSError):
            pass
        finally:
            writer.close()

    await asyncio.gather(*(one(i) for i in range(n)))
    peak.running = False
    await watcher
    return {
        "key": "valid" if key else "unknown",
        "connections": n,
        "body_bytes_each": size - 1,
        "answered_or_cut": len(cut),
        "held_to_the_end": n - len(cut),
        "first_cut_s": round(min(cut), 1) if cut else None,
        "last_cut_s": round(max(cut), 1) if cut else None,
        "rss_mb_before": round(peak.start, 1),
        "rss_mb_peak": round(peak.peak, 1),
    }


async def main() -> None:
    base, pid, email = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    args = sys.argv[4:]
    n_flood = int(args[args.index("--flood") + 1]) if "--flood" in args else 200
    n_slow = int(args[args.index("--slow") + 1]) if "--slow" in args else 300
    key = args[args.index("--key") + 1] if "--key" in args else None
    host, port = base.split("//")[1].split(":")
    out = {
        "flood": await flood(base, pid, email, n_flood),
        "slow_bodies": await slow_bodies(host, int(port), pid, n_slow, hold=60, key=key),
    }
    print(json.dumps(out, indent=1))


asyncio.run(main())
