"""An unmodified runpod-python worker: the same file runs on RunPod Serverless and under `berth dev`."""
import asyncio

import runpod


async def handler(job):
    inp = job["input"]
    seconds = float(inp.get("seconds", 0))
    if seconds > 0:
        runpod.serverless.progress_update(job, {"sleeping": seconds})
        await asyncio.sleep(seconds)  # an async handler: /cancel stops it here
    if "fail" in inp:
        raise ValueError(str(inp["fail"]))
    return {"echo": inp}


runpod.serverless.start({"handler": handler})
