import Foundation
import ReelCore

/// The finaliser of an HLS ladder: moves the fragments of every rendition's chunks into
/// segment files and writes the playlists and the DASH manifest. It re-encodes nothing and
/// rewrites no box: chunks carry the job's decode times already (`ChunkRenderer.renderLadder`).
///
/// The output folder (the master playlist's directory) receives, for each rendition,
/// `NAME/init.mp4`, `NAME/seg-00001.m4s …` and `NAME/index.m3u8`; the sound in `audio/` (with
/// `export.audioOutputs`, each output in `audio-1/`, `audio-2/` …, the renditions of the
/// master playlist's AUDIO group); the subtitle tracks in `subtitles-1/` … (its SUBTITLES group,
/// `LadderSubtitles.swift`); the master playlist under the output's name; `manifest.mpd`; and scrubbing thumbnails
/// (`thumbnails.vtt` and its contact sheets, `LadderThumbnails.swift`). Every file is written in a
/// work folder first and moved into place once all are checked, the master playlist last.
///
/// Checks: every rendition's chunks tile the frames, match their planned size and SHA-256,
/// share one init segment byte for byte, and hold one fragment per segment with exactly the
/// segment's frames. Segment durations and bit rates are measured from the samples and sizes
/// written: `BANDWIDTH` is the peak segment bit rate of the video plus the audio's peak,
/// `AVERAGE-BANDWIDTH` the mean of each over the whole programme.
extension Finaliser {
    /// One segment as written: its file, size, decode time and duration (ticks of `timescale`).
    struct LadderSegment {
        var name: String
        var bytes: Int
        var decodeTime: Int
        var ticks: Int
    }

    /// One rendition (or the audio) as packaged.
    struct PackagedTrack {
        var folder: String
        var codec: String
        var timescale: Int
        var segments: [LadderSegment]

        func seconds(_ s: LadderSegment) -> Double { Double(s.ticks) / Double(timescale) }
        /// The highest bit rate of any segment (bits per second).
        var peakBitRate: Int {
            Int((segments.map { Double($0.bytes * 8) / seconds($0) }.max() ?? 0).rounded(.up))
        }
        var averageBitRate: Int {
            let bytes = segments.reduce(0) { $0 + $1.bytes }, ticks = segments.reduce(0) { $0 + $1.ticks }
            return ticks == 0 ? 0 : Int((Double(bytes * 8) * Double(timescale) / Double(ticks)).rounded(.up))
        }
        var byteCount: Int { segments.reduce(0) { $0 + $1.bytes } }
    }

    public static func finaliseLadder(_ plan: RenderPlan, chunks: [ChunkArtifact], audio: ChunkArtifact?, to masterPath: String) throws -> Report {
        guard let ladder = plan.export.ladder else { throw Failure(description: "finaliseLadder on a plan without an HLS ladder") }
        if plan.hasSound && audio == nil { throw Failure(description: "the plan has audio but no audio result was given") }
        let master = URL(fileURLWithPath: masterPath)
        let folder = master.deletingLastPathComponent()
        let work = folder.appendingPathComponent(".\(master.lastPathComponent).partial")
        try? FileManager.default.removeItem(at: work)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }

        var tracks: [PackagedTrack] = []
        for rendition in ladder.renditions {
            let own = chunks.filter { $0.rendition == rendition.name }.sorted { $0.frames.start < $1.frames.start }
            try checkTiling(own, frameCount: plan.frameCount)
            for chunk in own { try verifyBytes(chunk) }
            let pieces = try own.map { ($0.frames, Array(try Data(contentsOf: URL(fileURLWithPath: $0.path)))) }
            tracks.append(try package(pieces, folder: rendition.name, into: work, segmentFrames: ladder.segmentFrames))
        }
        let unknown = Set(chunks.compactMap(\.rendition)).subtracting(ladder.renditions.map(\.name))
        if !unknown.isEmpty || chunks.contains(where: { $0.rendition == nil }) {
            throw Failure(description: "video results for renditions the ladder does not have: \(unknown.sorted().joined(separator: ", "))")
        }
        // The sound: one mix, or one file per audio output, one after another (`renderLadderAudio`).
        var sounds: [PackagedTrack] = []
        if let audio {
            try verifyBytes(audio)
            let files = try FragmentedMP4.files(Array(try Data(contentsOf: URL(fileURLWithPath: audio.path))))
            let folders = plan.export.audioOutputs.map { $0.indices.map { RenditionLadder.audioFolder(output: $0) } } ?? [Self.audioFolder]
            guard files.count == folders.count else {
                throw Failure(description: "the audio result holds \(files.count) stream(s), but the ladder has \(folders.count) audio output(s); render the audio again")
            }
            for (file, folder) in zip(files, folders) {
                sounds.append(try package([(audio.frames, file)], folder: folder, into: work, segmentFrames: nil))
            }
        }
        let subtitles = try writeSubtitles(plan, segments: tracks[0], into: work)

        for (rendition, track) in zip(ladder.renditions, tracks) {
            try write(mediaPlaylist(track), to: work.appendingPathComponent("\(rendition.name)/index.m3u8"))
        }
        for sound in sounds { try write(mediaPlaylist(sound), to: work.appendingPathComponent("\(sound.folder)/index.m3u8")) }
        try write(masterPlaylist(plan, ladder: ladder, tracks: tracks, sounds: sounds, subtitles: subtitles),
                  to: work.appendingPathComponent(master.lastPathComponent))
        try write(dashManifest(plan, ladder: ladder, tracks: tracks, sounds: sounds, subtitles: subtitles),
                  to: work.appendingPathComponent(Self.dashManifestName))
        let thumbnails = try writeThumbnails(plan, ladder: ladder, tracks: tracks, into: work)

        // Into place: the folders, the thumbnails and the manifest, then the master playlist.
        let names = ladder.renditions.map(\.name) + sounds.map(\.folder) + subtitles.map(\.folder) + thumbnails
            + [Self.dashManifestName, master.lastPathComponent]
        for name in names {
            let destination = folder.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: work.appendingPathComponent(name), to: destination)
        }
        let bytes = (tracks + sounds).reduce(0) { $0 + $1.byteCount }
        return Report(frames: plan.frameCount, audioPackets: sounds.reduce(0) { $0 + $1.segments.count }, byteCount: bytes,
                      // Figures are for people: a result without readable ones never fails the job.
                      loudness: audio.map { (try? LoudnessTag.read(path: $0.path)) ?? [] } ?? [])
    }

    /// The folder of the audio rendition group (a name `RenditionLadder` keeps from renditions).
    public static let audioFolder = RenditionLadder.audioFolder
    public static let dashManifestName = "manifest.mpd"

    /// Splits `chunks` (each its frames and its file's bytes, in order) into `folder/init.mp4`
    /// and numbered segments, checking they share one init segment and, for video, hold one
    /// fragment of `segmentFrames` frames per segment (the last one shorter).
    static func package(_ chunks: [(frames: FrameRange, bytes: [UInt8])], folder: String, into work: URL, segmentFrames: Int?) throws -> PackagedTrack {
        let directory = work.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var initSegment: [UInt8]?, segments: [LadderSegment] = []
        var timescale = 0, trexDuration = 0, codec = ""
        for chunk in chunks {
            let split = try FragmentedMP4.split(chunk.bytes)
            if let initSegment {
                guard initSegment == split.initSegment else {
                    throw Failure(description: "\(folder): chunk \(chunk.frames) was encoded with different parameters than the first "
                                  + "(its init segment differs); re-render it")
                }
            } else {
                initSegment = split.initSegment
                timescale = try FragmentedMP4.timescale(initSegment: split.initSegment)
                trexDuration = try FragmentedMP4.defaultSampleDuration(initSegment: split.initSegment)
                codec = try FragmentedMP4.codecString(initSegment: split.initSegment)
                try Data(split.initSegment).write(to: directory.appendingPathComponent("init.mp4"))
            }
            var frames = 0
            for fragment in split.fragments {
                let timing = try FragmentedMP4.timing(of: fragment, defaultSampleDuration: trexDuration)
                if let segmentFrames {
                    let start = chunk.frames.start + frames
                    let expected = min(segmentFrames, chunk.frames.end - start)
                    guard timing.samples == expected else {
                        throw Failure(description: "\(folder): the segment at frame \(start) holds \(timing.samples) frames, planned \(expected); re-render chunk \(chunk.frames)")
                    }
                    frames += timing.samples
                }
                let name = String(format: "seg-%05d.m4s", segments.count + 1)
                try Data(fragment).write(to: directory.appendingPathComponent(name))
                segments.append(LadderSegment(name: name, bytes: fragment.count, decodeTime: timing.decodeTime, ticks: timing.duration))
            }
            if segmentFrames != nil, frames != chunk.frames.count {
                throw Failure(description: "\(folder): chunk \(chunk.frames) holds \(frames) frames, planned \(chunk.frames.count); re-render it")
            }
        }
        guard timescale > 0, !segments.isEmpty else { throw Failure(description: "\(folder): no segment was written") }
        return PackagedTrack(folder: folder, codec: codec, timescale: timescale, segments: segments)
    }

    static func mediaPlaylist(_ track: PackagedTrack) -> String {
        let target = Int(track.segments.map { track.seconds($0) }.max()!.rounded(.up))
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(target)", "#EXT-X-MEDIA-SEQUENCE:1",
                     "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-INDEPENDENT-SEGMENTS", #"#EXT-X-MAP:URI="init.mp4""#]
        for segment in track.segments {
            lines.append(String(format: "#EXTINF:%.6f,", track.seconds(segment)))
            lines.append(segment.name)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    static func masterPlaylist(_ plan: RenderPlan, ladder: RenditionLadder, tracks: [PackagedTrack], sounds: [PackagedTrack],
                               subtitles: [SubtitleRendition]) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "'").replacingOccurrences(of: "\n", with: " ") + "\"" }
        let outputs = plan.export.audioOutputs
        let soundNames = uniqueNames(sounds.indices.map { i in outputs.map { $0[i].title ?? $0[i].language.tag } ?? "audio" })
        for (index, sound) in sounds.enumerated() {
            let language = outputs.map { ",LANGUAGE=" + quoted($0[index].language.tag) } ?? ""
            lines.append(#"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio""# + language + ",NAME=\(quoted(soundNames[index])),"
                         + "DEFAULT=\(index == 0 ? "YES" : "NO"),AUTOSELECT=YES,"
                         + #"CHANNELS="\#(plan.export.audio.channels)",URI="\#(sound.folder)/index.m3u8""#)
        }
        let subtitleNames = uniqueNames(subtitles.map { $0.track.title ?? $0.track.language.tag })
        for (index, subtitle) in subtitles.enumerated() {
            lines.append(#"#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subtitles",LANGUAGE="# + quoted(subtitle.track.language.tag)
                         + ",NAME=\(quoted(subtitleNames[index])),DEFAULT=\(subtitle.track.isDefault ? "YES" : "NO"),AUTOSELECT=YES,"
                         + #"URI="\#(subtitle.folder)/index.m3u8""#)
        }
        let frameRate = String(format: "%.3f", (Rational.one / plan.frameDuration).seconds)
        // BANDWIDTH counts the most demanding choice of every group; AVERAGE-BANDWIDTH likewise.
        let soundPeak = sounds.map(\.peakBitRate).max() ?? 0, soundAverage = sounds.map(\.averageBitRate).max() ?? 0
        let textPeak = subtitles.map(\.peakBitRate).max() ?? 0, textAverage = subtitles.map(\.averageBitRate).max() ?? 0
        for (rendition, track) in zip(ladder.renditions, tracks) {
            let peak = track.peakBitRate + soundPeak + textPeak
            let average = track.averageBitRate + soundAverage + textAverage
            let codecs = [track.codec] + (sounds.first.map { [$0.codec] } ?? [])
            lines.append("#EXT-X-STREAM-INF:BANDWIDTH=\(peak),AVERAGE-BANDWIDTH=\(average),CODECS=\"\(codecs.joined(separator: ","))\","
                         + "RESOLUTION=\(rendition.size.width)x\(rendition.size.height),FRAME-RATE=\(frameRate)"
                         + (sounds.isEmpty ? "" : #",AUDIO="audio""#) + (subtitles.isEmpty ? "" : #",SUBTITLES="subtitles""#))
            lines.append("\(rendition.name)/index.m3u8")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `names`, each one that repeats an earlier one numbered (`"en (2)"`): a group's NAMEs must differ.
    static func uniqueNames(_ names: [String]) -> [String] {
        var seen: [String: Int] = [:]
        return names.map { name in
            seen[name, default: 0] += 1
            return seen[name]! == 1 ? name : "\(name) (\(seen[name]!))"
        }
    }

    static func dashManifest(_ plan: RenderPlan, ladder: RenditionLadder, tracks: [PackagedTrack], sounds: [PackagedTrack],
                             subtitles: [SubtitleRendition]) -> String {
        func duration(_ seconds: Double) -> String { String(format: "PT%.3fS", seconds) }
        func timeline(_ track: PackagedTrack) -> String {
            // Runs of equal durations: <S t d r>, t on the first of each run.
            var out = "", index = 0
            while index < track.segments.count {
                let first = track.segments[index]
                var repeats = 0
                while index + repeats + 1 < track.segments.count, track.segments[index + repeats + 1].ticks == first.ticks { repeats += 1 }
                out += "<S t=\"\(first.decodeTime)\" d=\"\(first.ticks)\"" + (repeats > 0 ? " r=\"\(repeats)\"" : "") + "/>"
                index += repeats + 1
            }
            return out
        }
        func template(_ track: PackagedTrack) -> String {
            "<SegmentTemplate timescale=\"\(track.timescale)\" initialization=\"\(track.folder)/init.mp4\" "
                + "media=\"\(track.folder)/seg-$Number%05d$.m4s\" startNumber=\"1\"><SegmentTimeline>\(timeline(track))</SegmentTimeline></SegmentTemplate>"
        }
        let rate = Rational.one / plan.frameDuration
        let frameRate = rate.den == 1 ? "\(rate.num)" : "\(rate.num)/\(rate.den)"
        let longest = max(ladder.segmentDuration.seconds, sounds.flatMap { s in s.segments.map { s.seconds($0) } }.max() ?? 0)
        var xml = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" "#
                + #"mediaPresentationDuration="\#(duration(plan.duration.seconds))" minBufferTime="\#(duration(longest))">"#,
            #"  <Period id="0" start="PT0S">"#,
            #"    <AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">"#,
        ]
        for (rendition, track) in zip(ladder.renditions, tracks) {
            xml.append("      <Representation id=\"\(rendition.name)\" bandwidth=\"\(track.peakBitRate)\" codecs=\"\(track.codec)\" "
                       + "width=\"\(rendition.size.width)\" height=\"\(rendition.size.height)\" frameRate=\"\(frameRate)\" sar=\"1:1\">")
            xml.append("        " + template(track))
            xml.append("      </Representation>")
        }
        xml.append("    </AdaptationSet>")
        // One audio adaptation set per output (per language), the first the main one.
        let outputs = plan.export.audioOutputs
        var id = 1
        for (index, sound) in sounds.enumerated() {
            let lang = outputs.map { " lang=\"\($0[index].language.tag)\"" } ?? ""
            xml.append("    <AdaptationSet id=\"\(id)\" contentType=\"audio\" mimeType=\"audio/mp4\"\(lang) segmentAlignment=\"true\">")
            if outputs != nil {
                xml.append("      <Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"\(index == 0 ? "main" : "alternate")\"/>")
                if let title = outputs?[index].title { xml.append("      <Label>\(xmlEscaped(title))</Label>") }
            }
            xml.append("      <Representation id=\"\(sound.folder)\" bandwidth=\"\(sound.peakBitRate)\" codecs=\"\(sound.codec)\" "
                       + "audioSamplingRate=\"\(plan.export.audio.sampleRate)\">")
            xml.append("        <AudioChannelConfiguration schemeIdUri=\"urn:mpeg:dash:23003:3:audio_channel_configuration:2011\" "
                       + "value=\"\(plan.export.audio.channels)\"/>")
            xml.append("        " + template(sound))
            xml.append("      </Representation>")
            xml.append("    </AdaptationSet>")
            id += 1
        }
        // Subtitles: each track's whole WebVTT file, a side file as DASH players take WebVTT.
        for subtitle in subtitles {
            xml.append("    <AdaptationSet id=\"\(id)\" contentType=\"text\" mimeType=\"text/vtt\" lang=\"\(subtitle.track.language.tag)\">")
            xml.append("      <Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"subtitle\"/>")
            if let title = subtitle.track.title { xml.append("      <Label>\(xmlEscaped(title))</Label>") }
            xml.append("      <Representation id=\"\(subtitle.folder)\" bandwidth=\"\(max(1, subtitle.averageBitRate))\">"
                       + "<BaseURL>\(subtitle.folder)/\(Self.wholeSubtitleFile)</BaseURL></Representation>")
            xml.append("    </AdaptationSet>")
            id += 1
        }
        xml += ["  </Period>", "</MPD>"]
        return xml.joined(separator: "\n") + "\n"
    }

    static func write(_ text: String, to url: URL) throws {
        try Data(text.utf8).write(to: url)
    }
}
