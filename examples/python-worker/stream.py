"""A streaming runpod-python worker: each yielded value is a chunk of /stream; the list of them is the output."""
import asyncio

import runpod


async def handler(job):
    for word in str(job["input"].get("text", "one two three")).split():
        await asyncio.sleep(0.05)
        yield word


runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
