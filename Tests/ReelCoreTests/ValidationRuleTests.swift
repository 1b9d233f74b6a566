import Testing
@testable import ReelCore
import ReelThreadTesting

/// One broken rule: a composition and exactly the problem lines it must produce.
struct RuleCase: Sendable, CustomTestStringConvertible {
    var name: String
    var json: String
    var expected: [String]
    var testDescription: String { name }
}

private let v1 = #"{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}"#
private let a2 = #"{"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0, "sourceRange": {"start": 0, "duration": 10}}]}"#
private func tracks(_ t: String...) -> String { "[" + t.joined(separator: ", ") + "]" }
private func video(_ segments: String, id: Int = 1) -> String { #"{"id": \#(id), "mediaType": "video", "segments": [\#(segments)]}"# }
private func audio(_ segments: String, id: Int = 2) -> String { #"{"id": \#(id), "mediaType": "audio", "segments": [\#(segments)]}"# }
private func vc(_ body: String) -> String { #""videoComposition": {\#(body)}"# }
private func instructions(_ layers: String) -> String {
    vc(#""instructions": [{"timeRange": {"start": 0, "duration": 10}, "layerInstructions": [\#(layers)]}]"#)
}
private let frame = #""frame": {"x": 0, "y": 0, "width": 100, "height": 50}"#
private func c(version: Int = 1, assets: String = Fixtures.ruleAssetsJSON, tracks t: String = tracks(v1, a2), _ extra: String = "") -> String {
    Fixtures.composition(version: version, assets: assets, tracks: t, extra: extra)
}

private let ruleCases: [RuleCase] = [
    RuleCase(name: "valid base", json: c(), expected: []),
    RuleCase(name: "format version", json: c(version: 2), expected: ["formatVersion: must be 1 (this Reel reads format version 1), not 2"]),
    RuleCase(name: "unavailable asset", json: c(assets: #""assets": {"a": {"url": "a.mp4"}, "m": {"url": "m.m4a"}, "gone": {"url": "gone.mp4"}}"#),
             expected: ["assets.gone.url: no such file"]),
    RuleCase(name: "unprobed asset", json: c(assets: #""assets": {"a": {"url": "a.mp4"}, "m": {"url": "m.m4a"}, "zz": {"url": "zz.mp4"}}"#),
             expected: ["assets.zz.url: was not probed"]),
    RuleCase(name: "unknown asset id", json: c(tracks: tracks(video(#"{"asset": "b", "at": 0}, {"asset": "a", "at": 0}"#), a2)),
             expected: [#"tracks[0].segments[0].asset: unknown asset "b""#]),
    RuleCase(name: "duplicate track id", json: c(tracks: tracks(v1, audio(#"{"asset": "m", "at": 0, "sourceRange": {"start": 0, "duration": 10}}"#, id: 1))),
             expected: ["tracks[1].id: duplicate track id 1 (also tracks[0])"]),
    RuleCase(name: "track id not positive", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0}"#, id: 0), a2)),
             expected: ["tracks[0].id: must be > 0"]),
    RuleCase(name: "overlapping segments", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "sourceRange": {"start": 0, "duration": 4}}, {"asset": "s", "at": 3, "duration": 2}, {"empty": {"start": 5, "duration": 1}}"#), a2)),
             expected: ["tracks[0].segments[1]: overlaps segments[0] from 3 s to 4 s"]),
    RuleCase(name: "empty segment overlapping", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "sourceRange": {"start": 0, "duration": 4}}, {"empty": {"start": "7/2", "duration": 1}}"#), a2)),
             expected: ["tracks[0].segments[1]: overlaps segments[0] from 3.5 s to 4 s"]),
    RuleCase(name: "negative at", json: c(tracks: tracks(video(#"{"asset": "s", "at": -1, "duration": 2}, {"asset": "a", "at": 1}"#), a2)),
             expected: ["tracks[0].segments[0].at: must be ≥ 0"]),
    RuleCase(name: "source start < 0", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "sourceRange": {"start": -0.5, "duration": 4}}"#), a2)),
             expected: ["tracks[0].segments[0].sourceRange.start: must be ≥ 0"]),
    RuleCase(name: "source duration 0", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0}, {"asset": "a", "at": 10, "sourceRange": {"start": 1, "duration": 0}}"#), a2)),
             expected: ["tracks[0].segments[1].sourceRange.duration: must be > 0"]),
    RuleCase(name: "source beyond end", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "sourceRange": {"start": 8, "duration": "5/2"}}"#), a2)),
             expected: [#"tracks[0].segments[0].sourceRange: ends at 10.5 s, beyond the end of asset "a" (10 s)"#]),
    RuleCase(name: "still without duration", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0}, {"asset": "s", "at": 10}"#), a2)),
             expected: ["tracks[0].segments[1].duration: is required for a still image"]),
    RuleCase(name: "still with source range", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0}, {"asset": "s", "at": 10, "sourceRange": {"start": 0, "duration": 1}}"#), a2)),
             expected: ["tracks[0].segments[1].sourceRange: a still image has no source range; give its duration instead",
                        "tracks[0].segments[1].duration: is required for a still image"]),
    RuleCase(name: "timed media with duration", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "duration": 3}"#), a2)),
             expected: ["tracks[0].segments[0].duration: on timed media, duration changes the speed of a sourceRange: give the sourceRange to play (trim with sourceRange alone)"]),
    RuleCase(name: "speed above 16x", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "sourceRange": {"start": 0, "duration": 8}, "duration": 0.4}"#), a2)),
             expected: ["tracks[0].segments[0].duration: plays sourceRange (8 s) in 0.4 s, a speed of 20×; speeds from 1/16× to 16× are accepted, so duration must lie between 0.5 s and 128 s"]),
    RuleCase(name: "speed below 1/16x", json: c(tracks: tracks(v1, audio(#"{"asset": "m", "at": 0, "sourceRange": {"start": 0, "duration": "1/3"}, "duration": 6}"#))),
             expected: ["tracks[1].segments[0].duration: plays sourceRange (0.333333 s (1/3)) in 6 s, a speed of 1/18×; speeds from 1/16× to 16× are accepted, so duration must lie between 0.020833 s (1/48) and 5.333333 s (16/3)"]),
    RuleCase(name: "speed duration 0", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "sourceRange": {"start": 0, "duration": 8}, "duration": 0}"#), a2)),
             expected: ["tracks[0].segments[0].duration: must be > 0"]),
    RuleCase(name: "speed 16x and 1/16x are fine", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0, "sourceRange": {"start": 0, "duration": 8}, "duration": 0.5}, {"asset": "a", "at": 0.5, "sourceRange": {"start": 0, "duration": 0.5}, "duration": 8}"#), a2)),
             expected: []),
    RuleCase(name: "still in audio track", json: c(tracks: tracks(v1, audio(#"{"asset": "s", "at": 0, "duration": 1}"#))),
             expected: [#"tracks[1].segments[0].asset: asset "s" is a still image; it cannot be in an audio track"#]),
    RuleCase(name: "no audio in audio track", json: c(tracks: tracks(v1, audio(#"{"asset": "n", "at": 0}"#))),
             expected: [#"tracks[1].segments[0].asset: asset "n" has no audio; it cannot be in an audio track"#]),
    RuleCase(name: "no video in video track", json: c(tracks: tracks(video(#"{"asset": "a", "at": 0}, {"asset": "m", "at": 10}"#), a2)),
             expected: [#"tracks[0].segments[1].asset: asset "m" has no video; it cannot be in a video track"#]),
    RuleCase(name: "audioMix unknown track", json: c(#""audioMix": [{"track": 7}]"#), expected: ["audioMix[0].track: no track with id 7"]),
    RuleCase(name: "audioMix video track", json: c(#""audioMix": [{"track": 1, "volume": 0.5}]"#),
             expected: ["audioMix[0].track: track 1 is a video track; audioMix needs an audio track"]),
    RuleCase(name: "audioMix twice", json: c(#""audioMix": [{"track": 2}, {"track": 2}]"#),
             expected: ["audioMix[1].track: track 2 already has parameters in audioMix[0]"]),
    RuleCase(name: "negative volume", json: c(#""audioMix": [{"track": 2, "volume": -1, "volumeRamps": [{"from": 1, "to": -0.5, "timeRange": {"start": 0, "duration": 1}}]}]"#),
             expected: ["audioMix[0].volume: must be ≥ 0", "audioMix[0].volumeRamps[0].to: must be ≥ 0"]),
    RuleCase(name: "volume ramps overlap", json: c(#""audioMix": [{"track": 2, "volumeRamps": [{"from": 1, "to": 0, "timeRange": {"start": 2, "duration": 2}}, {"from": 0, "to": 1, "timeRange": {"start": 1, "duration": 2}}]}]"#),
             expected: ["audioMix[0].volumeRamps[0].timeRange: overlaps volumeRamps[1] from 2 s to 3 s; ramps of one property must not overlap"]),
    RuleCase(name: "ramp duration 0", json: c(#""audioMix": [{"track": 2, "volumeRamps": [{"from": 1, "to": 0, "timeRange": {"start": 2, "duration": 0}}]}]"#),
             expected: ["audioMix[0].volumeRamps[0].timeRange.duration: must be > 0"]),
    RuleCase(name: "layer unknown track", json: c(instructions(#"{"track": 9}"#)),
             expected: ["videoComposition.instructions[0].layerInstructions[0].track: no track with id 9"]),
    RuleCase(name: "layer audio track", json: c(instructions(#"{"track": 2}"#)),
             expected: ["videoComposition.instructions[0].layerInstructions[0].track: track 2 is an audio track; layer instructions need a video track"]),
    RuleCase(name: "layer track twice", json: c(instructions(#"{"track": 1}, {"track": 1}"#)),
             expected: ["videoComposition.instructions[0].layerInstructions[1].track: track 1 already has layerInstructions[0] in this instruction"]),
    RuleCase(name: "opacity ramps overlap", json: c(instructions(#"{"track": 1, "opacityRamps": [{"from": 1, "to": 0, "timeRange": {"start": 1, "duration": 2}}, {"from": 0, "to": 1, "timeRange": {"start": 2.5, "duration": 1}}]}"#)),
             expected: ["videoComposition.instructions[0].layerInstructions[0].opacityRamps[1].timeRange: overlaps opacityRamps[0] from 2.5 s to 3 s; ramps of one property must not overlap"]),
    RuleCase(name: "transform ramps overlap", json: c(instructions(#"{"track": 1, "transformRamps": [{"from": {"a":1,"b":0,"c":0,"d":1,"tx":0,"ty":0}, "to": {"a":1,"b":0,"c":0,"d":1,"tx":9,"ty":0}, "timeRange": {"start": 0, "duration": 5}}, {"from": {"a":1,"b":0,"c":0,"d":1,"tx":0,"ty":0}, "to": {"a":1,"b":0,"c":0,"d":1,"tx":9,"ty":0}, "timeRange": {"start": 0, "duration": 1}}]}"#)),
             expected: ["videoComposition.instructions[0].layerInstructions[0].transformRamps[1].timeRange: overlaps transformRamps[0] from 0 s to 1 s; ramps of one property must not overlap"]),
    RuleCase(name: "layer opacity range", json: c(instructions(#"{"track": 1, "opacity": 1.5}"#)),
             expected: ["videoComposition.instructions[0].layerInstructions[0].opacity: must be between 0 and 1"]),
    RuleCase(name: "crop size", json: c(instructions(#"{"track": 1, "cropRectangle": {"x": 0, "y": 0, "width": 0, "height": 10}}"#)),
             expected: ["videoComposition.instructions[0].layerInstructions[0].cropRectangle.width: must be > 0"]),
    RuleCase(name: "instruction gap", json: c(vc(#""instructions": [{"timeRange": {"start": 0, "duration": 4}}, {"timeRange": {"start": 5, "duration": 5}}]"#)),
             expected: ["videoComposition.instructions: gap from 4 s to 5 s not covered by any instruction"]),
    RuleCase(name: "instruction overlap", json: c(vc(#""instructions": [{"timeRange": {"start": 0, "duration": 6}}, {"timeRange": {"start": 5, "duration": 5}}]"#)),
             expected: ["videoComposition.instructions[1].timeRange: overlaps instructions[0] from 5 s to 6 s"]),
    RuleCase(name: "instructions short", json: c(vc(#""instructions": [{"timeRange": {"start": 0, "duration": "1001/1000"}}]"#)),
             expected: ["videoComposition.instructions: gap from 1.001 s to 10 s not covered by any instruction"]),
    RuleCase(name: "instructions long", json: c(vc(#""instructions": [{"timeRange": {"start": 0, "duration": 11}}]"#)),
             expected: ["videoComposition.instructions[0].timeRange: ends at 11 s, after the composition's end 10 s"]),
    RuleCase(name: "no instructions", json: c(vc(#""instructions": []"#)),
             expected: ["videoComposition.instructions: gap from 0 s to 10 s not covered by any instruction"]),
    RuleCase(name: "render size zero", json: c(vc(#""renderSize": {"width": 0, "height": 720}"#)),
             expected: ["videoComposition.renderSize.width: must be > 0"]),
    RuleCase(name: "render size odd", json: c(vc(#""renderSize": {"width": 1280, "height": 721}"#)),
             expected: ["videoComposition.renderSize.height: must be even (H.264 4:2:0 needs even sizes)"]),
    RuleCase(name: "render size too big", json: c(vc(#""renderSize": {"width": 8194, "height": 720}"#)),
             expected: ["videoComposition.renderSize.width: must be ≤ 8192"]),
    RuleCase(name: "frame duration zero", json: c(vc(#""frameDuration": 0"#)), expected: ["videoComposition.frameDuration: must be > 0"]),
    RuleCase(name: "frame duration negative", json: c(vc(#""frameDuration": "-1/30""#)), expected: ["videoComposition.frameDuration: must be > 0"]),
    RuleCase(name: "overlay image not still", json: c(vc(#""overlays": [{"image": "a", \#(frame)}]"#)),
             expected: [#"videoComposition.overlays[0].image: asset "a" is not a still image"#]),
    RuleCase(name: "overlay image unknown", json: c(vc(#""overlays": [{"image": "q", \#(frame)}]"#)),
             expected: [#"videoComposition.overlays[0].image: unknown asset "q""#]),
    RuleCase(name: "font size", json: c(vc(#""overlays": [{"text": "x", "fontSize": 0, \#(frame)}]"#)),
             expected: ["videoComposition.overlays[0].fontSize: must be between 1 and 4096 pixels"]),
    RuleCase(name: "font size FreeType refuses", json: c(vc(#""overlays": [{"text": "x", "fontSize": 100000, \#(frame)}]"#)),
             expected: ["videoComposition.overlays[0].fontSize: must be between 1 and 4096 pixels"]),
    RuleCase(name: "overlay frame too large", json: c(vc(#""overlays": [{"text": "x", "frame": {"x": 0, "y": 0, "width": 1e9, "height": 20}}]"#)),
             expected: ["videoComposition.overlays[0].frame.width: must be ≤ 8192"]),
    RuleCase(name: "empty text", json: c(vc(#""overlays": [{"text": "", \#(frame)}]"#)),
             expected: ["videoComposition.overlays[0].text: must not be empty"]),
    RuleCase(name: "overlay frame and opacity", json: c(vc(#""overlays": [{"text": "x", "opacity": 2, "frame": {"x": 0, "y": 0, "width": 10, "height": -1}}]"#)),
             expected: ["videoComposition.overlays[0].frame.height: must be > 0", "videoComposition.overlays[0].opacity: must be between 0 and 1"]),
    RuleCase(name: "animation duration", json: c(vc(#""overlays": [{"text": "x", \#(frame), "animations": [{"property": "scale", "from": 1, "to": 2, "duration": 0, "begin": -1}]}]"#)),
             expected: ["videoComposition.overlays[0].animations[0].duration: must be > 0", "videoComposition.overlays[0].animations[0].begin: must be ≥ 0"]),
    RuleCase(name: "video codec", json: c(#""export": {"video": {"codec": "mpeg2"}}"#), expected: [#"export.video.codec: must be one of "h264", "hevc", "prores", "vp9", "av1", "png", not "mpeg2""#]),
    RuleCase(name: "png sequence", json: c(tracks: tracks(v1), #""export": {"fileType": "png", "preset": "prores4444", "video": {"alpha": true}}"#), expected: []),
    RuleCase(name: "png sequence with sound", json: c(#""export": {"fileType": "png"}"#),
             expected: ["tracks: a PNG sequence holds pictures only, but the composition has 1 audio track(s): remove them, or render the sound on its own to a .wav"]),
    RuleCase(name: "png sequence with a video codec", json: c(tracks: tracks(v1), #""export": {"fileType": "png", "video": {"codec": "h264", "crf": 20}}"#),
             expected: [#"export.video.codec: is "h264", but export.fileType "png" is a PNG sequence, whose frames are PNG pictures: remove codec, or choose another fileType"#]),
    RuleCase(name: "png sequence with a quality", json: c(tracks: tracks(v1), #""export": {"fileType": "png", "video": {"crf": 20}}"#),
             expected: [#"export.video.crf: a PNG sequence is written as PNG, which is lossless, with no quality or bit rate to set: remove crf"#]),
    RuleCase(name: "png codec in mp4", json: c(tracks: tracks(v1), #""export": {"fileType": "mp4", "video": {"codec": "png"}}"#),
             expected: [#"export.fileType: is "mp4", but export.video.codec "png" encodes PNG, which Reel writes only in "png": set "fileType": "png" (and name the output .png), or choose another codec"#]),
    RuleCase(name: "png sequence with a ladder key", json: c(tracks: tracks(v1), #""export": {"fileType": "png", "segmentDuration": 4}"#),
             expected: [#"export.segmentDuration: applies only to an HLS output, but export.fileType is "png": set "fileType": "hls" (or name the output DIR/master.m3u8), or remove segmentDuration"#]),
    RuleCase(name: "hevc", json: c(#""export": {"fileType": "mov", "video": {"codec": "hevc", "crf": 20, "x265Preset": "fast", "bitRate": 900000}}"#), expected: []),
    RuleCase(name: "prores", json: c(#""export": {"fileType": "mov", "video": {"codec": "prores", "proresProfile": "4444", "gopDuration": 1}}"#), expected: []),
    RuleCase(name: "prores presets", json: c(#""export": {"preset": "prores4444"}"#), expected: []),
    RuleCase(name: "prores in mp4", json: c(#""export": {"fileType": "mp4", "video": {"codec": "prores"}}"#),
             expected: [#"export.fileType: is "mp4", but export.video.codec "prores" encodes ProRes, which Reel writes only in "mov": set "fileType": "mov" (and name the output .mov), or choose another codec"#]),
    RuleCase(name: "prores preset in mp4", json: c(#""export": {"preset": "prores422", "fileType": "mp4"}"#),
             expected: [#"export.fileType: is "mp4", but export.preset "prores422" encodes ProRes, which Reel writes only in "mov": set "fileType": "mov" (and name the output .mov), or choose another codec"#]),
    RuleCase(name: "prores profile", json: c(#""export": {"video": {"codec": "prores", "proresProfile": "xq"}}"#),
             expected: [#"export.video.proresProfile: must be one of "proxy", "lt", "422", "hq", "4444", "4444xq", not "xq""#]),
    RuleCase(name: "prores 4444xq with alpha", json: c(#""export": {"video": {"codec": "prores", "proresProfile": "4444xq", "alpha": true}}"#), expected: []),
    RuleCase(name: "alpha with h264", json: c(#""export": {"video": {"alpha": true}}"#),
             expected: [#"export.video.alpha: is true, but export.preset "highest" encodes H.264, which Reel writes without alpha: set "codec": "prores" with "proresProfile": "4444" (or "4444xq"), or "codec": "vp9" in WebM, or remove alpha"#]),
    RuleCase(name: "alpha with vp9", json: c(#""export": {"fileType": "webm", "video": {"codec": "vp9", "alpha": true}}"#), expected: []),
    RuleCase(name: "alpha with av1 in webm", json: c(#""export": {"fileType": "webm", "video": {"codec": "av1", "alpha": true}}"#),
             expected: [#"export.video.alpha: is true, but export.video.codec "av1" encodes AV1, which Reel writes without alpha: set "codec": "prores" with "proresProfile": "4444" (or "4444xq"), or "codec": "vp9" in WebM, or remove alpha"#]),
    RuleCase(name: "alpha with prores 422", json: c(#""export": {"preset": "prores422", "video": {"alpha": true}}"#),
             expected: [#"export.video.alpha: is true, but ProRes profile "422" has no alpha channel: set "proresProfile": "4444" (or "4444xq"), or remove alpha"#]),
    RuleCase(name: "alpha off", json: c(#""export": {"preset": "prores4444", "video": {"alpha": false}}"#), expected: []),
    RuleCase(name: "alpha type", json: c(#""export": {"preset": "prores4444", "video": {"alpha": "yes"}}"#),
             expected: [#"export.video.alpha: must be true or false, not a string"#]),
    RuleCase(name: "prores profile without prores", json: c(#""export": {"preset": "hevcHighest", "video": {"proresProfile": "hq"}}"#),
             expected: [#"export.video.proresProfile: applies only to codec "prores", but export.preset "hevcHighest" encodes HEVC: remove it, or set "codec": "prores""#]),
    RuleCase(name: "x264 preset with hevc", json: c(#""export": {"video": {"codec": "hevc", "x264Preset": "fast"}}"#),
             expected: [#"export.video.x264Preset: applies only to codec "h264", but export.video.codec "hevc" encodes HEVC: use x265Preset instead"#]),
    RuleCase(name: "x265 preset with h264", json: c(#""export": {"video": {"x265Preset": "fast"}}"#),
             expected: [#"export.video.x265Preset: applies only to codec "hevc", but export.preset "highest" encodes H.264: use x264Preset instead"#]),
    RuleCase(name: "x265 preset name", json: c(#""export": {"video": {"codec": "hevc", "x265Preset": "turbo"}}"#),
             expected: [#"export.video.x265Preset: must be one of ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo, not "turbo""#]),
    RuleCase(name: "rate control with prores", json: c(#""export": {"preset": "prores422", "video": {"crf": 20, "bitRate": 900000, "x264Preset": "fast"}}"#),
             expected: [#"export.video.x264Preset: applies only to codec "h264", but export.preset "prores422" encodes ProRes: ProRes has no speed preset: remove it"#,
                        #"export.video.crf: export.preset "prores422" encodes ProRes, whose quality and bit rate are set by its profile: remove crf, or choose "proresProfile" (proxy, lt, 422, hq, 4444, 4444xq)"#,
                        #"export.video.bitRate: export.preset "prores422" encodes ProRes, whose quality and bit rate are set by its profile: remove bitRate, or choose "proresProfile" (proxy, lt, 422, hq, 4444, 4444xq)"#]),
    RuleCase(name: "crf", json: c(#""export": {"video": {"crf": 52}}"#), expected: ["export.video.crf: must be between 0 and 51"]),
    RuleCase(name: "x264 preset", json: c(#""export": {"video": {"x264Preset": "turbo"}}"#),
             expected: [#"export.video.x264Preset: must be one of ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo, not "turbo""#]),
    RuleCase(name: "gop duration", json: c(#""export": {"video": {"gopDuration": 0}}"#), expected: ["export.video.gopDuration: must be > 0"]),
    RuleCase(name: "video bit rate", json: c(#""export": {"video": {"bitRate": 0}}"#), expected: ["export.video.bitRate: must be > 0"]),
    RuleCase(name: "audio codec", json: c(#""export": {"audio": {"codec": "mp3"}}"#), expected: [#"export.audio.codec: must be one of "aac", "opus", "pcm", not "mp3""#]),
    RuleCase(name: "pcm in mp4", json: c(#""export": {"fileType": "mp4", "audio": {"codec": "pcm"}}"#),
             expected: [#"export.audio.codec: is "pcm", but export.fileType "mp4" cannot hold PCM (Reel writes it only in "wav"): remove codec to get AAC, or change fileType"#]),
    RuleCase(name: "aac in wav", json: c(#""export": {"fileType": "wav", "audio": {"codec": "aac"}}"#),
             expected: [#"export.audio.codec: is "aac", but export.fileType "wav" cannot hold AAC (Reel writes it only in "mp4", "mov", "m4a"): remove codec to get PCM, or change fileType"#]),
    RuleCase(name: "pcm has no bit rate", json: c(#""export": {"fileType": "wav", "audio": {"bitRate": 128000}}"#),
             expected: ["export.audio.bitRate: the container's default is PCM, uncompressed 16-bit samples with no bit rate: remove bitRate"]),
    RuleCase(name: "wav", json: c(#""export": {"fileType": "wav", "audio": {"sampleRate": 44100, "channels": 1}}"#), expected: []),
    RuleCase(name: "m4a ignores the video codec", json: c(#""export": {"preset": "prores422", "fileType": "m4a"}"#), expected: []),
    RuleCase(name: "m4a without sound", json: c(tracks: tracks(v1), #""export": {"fileType": "m4a"}"#),
             expected: ["tracks: an M4A output holds sound only, but no track is an audio track: add one, or write a video container (mp4, mov)"]),
    RuleCase(name: "sample rate", json: c(#""export": {"audio": {"sampleRate": 44000}}"#),
             expected: ["export.audio.sampleRate: must be one of AAC's sample rates: 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000"]),
    RuleCase(name: "channels", json: c(#""export": {"audio": {"channels": 6}}"#), expected: ["export.audio.channels: must be 1 or 2"]),
    RuleCase(name: "empty composition", json: c(tracks: "[]"), expected: ["tracks: the composition is empty: no segment has a duration"]),
    RuleCase(name: "audio only needs no render size", json: c(tracks: tracks(a2)), expected: []),
    RuleCase(name: "audio only with a render size", json: c(tracks: tracks(a2), vc(#""renderSize": {"width": 640, "height": 360}"#)), expected: []),
    RuleCase(name: "an empty video track needs a render size", json: c(tracks: tracks(video(""), a2)),
             expected: ["videoComposition.renderSize: is required when no track shows video (a composition with no video track and no overlay is sound only and needs none)"]),
]

@Suite("Validation rules", .blocking)
struct ValidationRuleTests {
    @Test(arguments: ruleCases)
    func rule(_ rule: RuleCase) {
        #expect(Fixtures.problems(rule.json) == rule.expected)
    }

    @Test func collectsProblemsFromEveryArea() {
        let json = c(version: 3, tracks: tracks(video(#"{"asset": "a", "at": 0}, {"asset": "s", "at": 2, "duration": 1}"#), audio(#"{"asset": "s", "at": 0, "duration": 1}"#)),
                     #""videoComposition": {"renderSize": {"width": 3, "height": 2}}, "export": {"video": {"crf": -1}}"#)
        #expect(Fixtures.problems(json) == [
            "formatVersion: must be 1 (this Reel reads format version 1), not 3",
            "tracks[0].segments[1]: overlaps segments[0] from 2 s to 3 s",
            #"tracks[1].segments[0].asset: asset "s" is a still image; it cannot be in an audio track"#,
            "videoComposition.renderSize.width: must be even (H.264 4:2:0 needs even sizes)",
            "export.video.crf: must be between 0 and 51",
        ])
    }

    @Test func designExampleAsWrittenBreaksTwoRules() {
        // The reference example puts two overlapping segments on audio track 2 and gives
        // one instruction for 0…4 s only: validation must say exactly that.
        #expect(Fixtures.problems(Fixtures.designExample, assets: Fixtures.designExampleAssets) == [
            "tracks[1].segments[1]: overlaps segments[0] from 0 s to 4 s",
            "videoComposition.instructions: gap from 4 s to 13 s not covered by any instruction",
        ])
    }
}
