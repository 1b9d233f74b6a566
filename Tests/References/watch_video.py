#!/usr/bin/env python3
"""Watches a <video> play in a real browser, in real time, as a person would.

Playwright (PyPI) drives the system's Chromium (--chromium, Debian's /usr/bin/chromium by
default; no browser of Playwright's own is needed). The media clock runs in real time: nothing
here uses virtual time, in which a video's playhead never moves.

    watch_video.py URL [--video SOURCE] [--selector CSS] [--caption CSS] [--past SECONDS]
                   [--to-end] [--loaded FILE] [--progress FILE] [--deadline SECONDS] [--screenshot PNG]

- Without --video, URL is a page with a video on it (the console's job page); --selector picks
  the element (the first <video> by default).
- With --video SOURCE, the page is a bare <video muted autoplay src=SOURCE>, served at URL: the
  request for URL is answered here (Playwright's routing), so the page has URL's origin, and
  every other request (the media's) goes to the network as usual.

Two phases, each polling the element until its condition holds, a MediaError is reported, or
its deadline (--deadline seconds, each) passes:

1. the playhead passes --past seconds (1.5 by default);
2. with --to-end, then: the element has ended, or its playhead is within 0.25 s of a finite
   duration.

Once the element has a frame to show (readyState 2) or an error, its state is written to
--loaded FILE, and after phase 1 to --progress FILE (each whole, by renaming), so a caller can
act while the same page goes on playing (render more of the job, say); the last phase's state is
printed on stdout. A state is one JSON object: whether the phase's condition was met (`met`), the
element's `currentTime`, `duration` (a number, "Infinity" or null), `readyState`, `networkState`,
`ended`, `paused`, `error` (code and message, or null), `buffered` ranges, `firstPlaying` (the
playhead at the first `playing` event), the media `events` seen in order, the text of --caption,
Chromium's media `log` (the player's errors and messages, as chrome://media-internals shows
them: they say why a source was refused) and `elapsed` seconds. The exit status is 0 whenever
it could watch (the caller judges what it saw), 2 when the browser or page could not be opened.
"""

import argparse
import json
import os
import sys
import time

# Installed in every document before its own scripts run: media events do not bubble, but a
# listener on the document in the capture phase sees every element's, so none is missed
# between polls, whenever the page creates its video.
RECORDER = """
(() => {
  window.__watch = { events: [], firstPlaying: null };
  for (const name of ["loadstart", "loadedmetadata", "loadeddata", "canplay", "canplaythrough", "playing",
                      "waiting", "stalled", "pause", "seeking", "seeked", "ended", "error", "emptied"]) {
    document.addEventListener(name, (event) => {
      const video = event.target;
      if (!(video instanceof HTMLMediaElement)) return;
      const log = window.__watch.events;
      if (log.length < 200) log.push([name, Math.round(video.currentTime * 1000) / 1000]);
      if (name === "playing" && window.__watch.firstPlaying === null) window.__watch.firstPlaying = video.currentTime;
    }, true);
  }
})();
"""

STATE = """
([selector, caption]) => {
  const video = document.querySelector(selector);
  if (!video) return null;
  const buffered = [];
  for (let i = 0; i < video.buffered.length; i++) buffered.push([video.buffered.start(i), video.buffered.end(i)]);
  const label = caption ? document.querySelector(caption) : null;
  return {
    currentTime: video.currentTime,
    duration: isFinite(video.duration) ? video.duration : (isNaN(video.duration) ? null : "Infinity"),
    readyState: video.readyState,
    networkState: video.networkState,
    ended: video.ended,
    paused: video.paused,
    error: video.error ? { code: video.error.code, message: video.error.message } : null,
    buffered: buffered,
    src: video.currentSrc.replace(/token=[^&]*/, "token=…"),
    firstPlaying: window.__watch ? window.__watch.firstPlaying : null,
    events: window.__watch ? window.__watch.events : [],
    caption: label ? label.textContent : null,
  };
}
"""


def bare_page(source):
    quoted = source.replace("&", "&amp;").replace('"', "&quot;")
    return ("<!doctype html><meta charset=utf-8><title>watch</title>"
            f'<video id="watched" muted playsinline autoplay controls src="{quoted}"></video>')


def passed(state, past):
    return state is not None and state["currentTime"] > past


def at_end(state):
    if state is None:
        return False
    duration = state["duration"]
    return state["ended"] or (isinstance(duration, (int, float)) and state["currentTime"] >= duration - 0.25)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--video", help="serve a bare <video> of this source at URL")
    parser.add_argument("--selector", default="video")
    parser.add_argument("--caption", help="a CSS selector whose text to report")
    parser.add_argument("--past", type=float, default=1.5, help="seconds the playhead must pass (phase 1)")
    parser.add_argument("--to-end", action="store_true", help="then watch on until the end (phase 2)")
    parser.add_argument("--loaded", help="write the state to this file once there is a frame to show")
    parser.add_argument("--progress", help="write phase 1's state to this file")
    parser.add_argument("--deadline", type=float, default=120, help="seconds each phase may take at most")
    parser.add_argument("--screenshot", help="a PNG of the page at the end of phase 1")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        print(f"watch_video.py: Playwright is missing ({error}): pip install playwright (ops/install-deps.sh)", file=sys.stderr)
        return 2

    start = time.monotonic()
    media_log = []

    def logged(items):
        for item in items:
            if len(media_log) < 100:
                media_log.append({key: item[key] for key in ("level", "message", "errorType", "code", "cause") if key in item})

    def write(path, result):
        with open(path + ".part", "w") as file:
            json.dump(result, file)
        os.rename(path + ".part", path)

    def watch(page, condition):
        phase_start = time.monotonic()
        while True:
            # The element may appear later (the job page shows it once the job's first chunk is done).
            state = page.evaluate(STATE, [args.selector, args.caption])
            if args.loaded and not os.path.exists(args.loaded) and state and (state["readyState"] >= 2 or state["error"]):
                write(args.loaded, state)
            if condition(state) or (state and state["error"]) or time.monotonic() - phase_start > args.deadline:
                break
            page.wait_for_timeout(100)   # the polling interval; the loop waits for the condition
        # Chromium sends its media log in batches (about once a second): on an error, wait (a
        # few seconds at most) for the player's reason to arrive.
        log_deadline = time.monotonic() + 5
        while state and state["error"] and not any("errorType" in entry for entry in media_log) and time.monotonic() < log_deadline:
            page.wait_for_timeout(100)
        result = {"met": condition(state), "elapsed": round(time.monotonic() - start, 3)}
        result.update(state or {"currentTime": None, "error": None, "readyState": None, "missing": args.selector})
        result["log"] = list(media_log)
        return result

    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=args.chromium, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                      "--autoplay-policy=no-user-gesture-required", "--mute-audio"])
        except Exception as error:  # noqa: BLE001 - any launch failure is reported the same way
            print(f"watch_video.py: cannot start {args.chromium}: {error}", file=sys.stderr)
            return 2
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.add_init_script(RECORDER)
            # Chromium's media log through the DevTools protocol (its Media domain).
            devtools = page.context.new_cdp_session(page)
            devtools.on("Media.playerErrorsRaised", lambda event: logged(event.get("errors", [])))
            devtools.on("Media.playerMessagesLogged",
                        lambda event: logged([m for m in event.get("messages", []) if m.get("level") in ("error", "warning")]))
            devtools.send("Media.enable")
            if args.video:
                html = bare_page(args.video)
                page.route(args.url, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html))
            page.goto(args.url, wait_until="load", timeout=args.deadline * 1000)
            result = watch(page, lambda state: passed(state, args.past))
            if args.screenshot:
                page.screenshot(path=args.screenshot)
            if args.loaded and not os.path.exists(args.loaded):
                write(args.loaded, result)
            if args.progress:
                write(args.progress, result)
            if args.to_end and result["met"]:
                result = watch(page, at_end)
        except Exception as error:  # noqa: BLE001
            print(f"watch_video.py: {args.url}: {error}", file=sys.stderr)
            browser.close()
            return 2
        browser.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
