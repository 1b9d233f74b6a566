#!/usr/bin/env python3
"""Builds the interchange tests' timelines with OpenTimelineIO itself (PyPI: opentimelineio,
opentimelineio-plugins, otio-fcpx-xml-adapter), so every file is written by OTIO's own code.

usage: make_timelines.py DIR

Writes into DIR, next to the media the test made there (a.mp4, b.mp4, c.mp4: 24 fps, 3 s):
  cut.otio     V1: A, a dissolve, B, a gap, C; V2 (on top): A again; A1: the sound of A then B
  single.otio  V1 alone (what a CMX 3600 EDL can say), and single.edl written from it by OTIO's
               CMX 3600 adapter
  warp.otio    one clip at twice its speed (LinearTimeWarp), and one at normal speed
  fcpx.fcpxml  V1 without its dissolve (OTIO's FCP X XML adapter writes no transitions), with
               absolute file URLs, written by OTIO's FCP X XML adapter; the test converts it
               back to .otio with otioconvert
The frames each clip starts at are the test's expectations: keep them in step.
"""
import os
import sys

import opentimelineio as otio

RATE = 24
RT = otio.opentime.RationalTime
TR = otio.opentime.TimeRange


def frames(n):
    return RT(n, RATE)


def clip(name, media, start, duration, absolute=False, directory=""):
    url = os.path.join(directory, media) if absolute else media
    if absolute:
        url = "file://" + url
    reference = otio.schema.ExternalReference(
        target_url=url, available_range=TR(frames(0), frames(72)))
    reference.name = media
    return otio.schema.Clip(name=name, media_reference=reference,
                            source_range=TR(frames(start), frames(duration)))


def picture_track(dissolve=True, **kw):
    v1 = otio.schema.Track(name="V1", kind=otio.schema.TrackKind.Video)
    v1.append(clip("A", "a.mp4", 12, 30, **kw))
    if dissolve:
        v1.append(otio.schema.Transition(
            transition_type=otio.schema.TransitionTypes.SMPTE_Dissolve,
            in_offset=frames(6), out_offset=frames(6)))
    v1.append(clip("B", "b.mp4", 24, 24, **kw))
    v1.append(otio.schema.Gap(source_range=TR(frames(0), frames(12))))
    v1.append(clip("C", "c.mp4", 0, 18, **kw))
    return v1


def main():
    directory = sys.argv[1]

    cut = otio.schema.Timeline(name="cut", global_start_time=RT(86400, RATE))
    cut.tracks.append(picture_track())
    v2 = otio.schema.Track(name="V2", kind=otio.schema.TrackKind.Video)
    v2.append(otio.schema.Gap(source_range=TR(frames(0), frames(40))))
    v2.append(clip("A again", "a.mp4", 50, 10))
    cut.tracks.append(v2)
    a1 = otio.schema.Track(name="A1", kind=otio.schema.TrackKind.Audio)
    a1.append(clip("A sound", "a.mp4", 12, 30))
    a1.append(clip("B sound", "b.mp4", 24, 24))
    cut.tracks.append(a1)
    cut.tracks[0][0].markers.append(otio.schema.Marker(
        name="check focus", marked_range=TR(frames(20), frames(0))))
    otio.adapters.write_to_file(cut, os.path.join(directory, "cut.otio"))

    single = otio.schema.Timeline(name="single")
    single.tracks.append(picture_track())
    otio.adapters.write_to_file(single, os.path.join(directory, "single.otio"))
    otio.adapters.write_to_file(single, os.path.join(directory, "single.edl"),
                                adapter_name="cmx_3600")

    fast = otio.schema.Timeline(name="warp")
    v1 = otio.schema.Track(name="V1", kind=otio.schema.TrackKind.Video)
    normal = clip("normal", "a.mp4", 0, 12)
    v1.append(normal)
    twice = clip("twice", "b.mp4", 0, 24)
    twice.effects.append(otio.schema.LinearTimeWarp(time_scalar=2.0))
    v1.append(twice)
    fast.tracks.append(v1)
    otio.adapters.write_to_file(fast, os.path.join(directory, "warp.otio"))

    fcpx = otio.schema.Timeline(name="fcpx", global_start_time=RT(0, RATE))
    fcpx.tracks.append(picture_track(dissolve=False, absolute=True, directory=directory))
    otio.adapters.write_to_file(fcpx, os.path.join(directory, "fcpx.fcpxml"),
                                adapter_name="fcpx_xml")


if __name__ == "__main__":
    main()
