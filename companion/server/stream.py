"""Pushed updates (server-sent events) and the camera picture.

Each SSE connection waits on the hub's change counter and sends the shared public
view when it changes, with a comment line as a heartbeat; it closes after
`SSE_MAX_SECONDS` and the browser reconnects by itself, so no thread is held for
ever by a vanished viewer.
"""

from __future__ import annotations

import json
import time

from flask import Blueprint, Response, current_app, stream_with_context

from companion.server.access import ApiError

bp = Blueprint("stream", __name__)


@bp.get("/events")
def events():
    hub = current_app.extensions["companion_hub"]
    views = current_app.extensions["companion_views"]
    heartbeat = float(current_app.config["SSE_HEARTBEAT"])
    limit = float(current_app.config["SSE_MAX_SECONDS"])

    def stream():
        deadline = time.monotonic() + limit
        seen = None
        yield "retry: 1000\n\n"
        while time.monotonic() < deadline:
            version = hub.version
            if version != seen:
                seen = version
                view = views.public()
                yield f"id: {view['version']}\nevent: state\ndata: {json.dumps(view, separators=(',', ':'))}\n\n"
                continue
            if hub.wait_for_change(seen, min(heartbeat, max(0.0, deadline - time.monotonic()))) == seen:
                yield ": keep-alive\n\n"

    return Response(stream_with_context(stream()), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@bp.get("/video.jpg")
def video_frame():
    hub = current_app.extensions["companion_hub"]
    frame, when = hub.frame()
    if frame is None:
        raise ApiError(404, f"no camera picture (feed: {hub.source_description})")
    return Response(frame, mimetype="image/jpeg", headers={"Cache-Control": "no-store",
                                                          "X-Frame-Time": f"{when:.3f}"})


@bp.get("/video.mjpg")
def video_stream():
    hub = current_app.extensions["companion_hub"]
    limit = float(current_app.config["SSE_MAX_SECONDS"])

    def frames():
        deadline = time.monotonic() + limit
        last = None
        while time.monotonic() < deadline:
            frame, when = hub.frame()
            if frame is not None and when != last:
                last = when
                yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(len(frame)).encode()
                       + b"\r\n\r\n" + frame + b"\r\n")
            hub.wait_for_change(hub.version, 1.0)

    return Response(stream_with_context(frames()), mimetype="multipart/x-mixed-replace; boundary=frame")
