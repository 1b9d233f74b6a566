import Foundation
import ReelCore

/// The finaliser of an HLS ladder: moves the fragments of every rendition's chunks into
/// segment files and writes the playlists and the DASH manifest. It re-encodes nothing and
/// rewrites no box: chunks carry the job's decode times already (`ChunkRenderer.renderLadder`).
///
/// The output folder (the master playlist's directory) receives, for each rendition,
/// `NAME/init.mp4`, `NAME/seg-00001.m4s …` and `NAME/index.m3u8`; the sound in `audio/`; the
/// master playlist under the output's name; `manifest.mpd`; and scrubbing thumbnails
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
            tracks.append(try package(own, folder: rendition.name, into: work, segmentFrames: ladder.segmentFrames))
        }
        let unknown = Set(chunks.compactMap(\.rendition)).subtracting(ladder.renditions.map(\.name))
        if !unknown.isEmpty || chunks.contains(where: { $0.rendition == nil }) {
            throw Failure(description: "video results for renditions the ladder does not have: \(unknown.sorted().joined(separator: ", "))")
        }
        var sound: PackagedTrack?
        if let audio {
            try verifyBytes(audio)
            sound = try package([audio], folder: Self.audioFolder, into: work, segmentFrames: nil)
        }

        for (rendition, track) in zip(ladder.renditions, tracks) {
            try write(mediaPlaylist(track), to: work.appendingPathComponent("\(rendition.name)/index.m3u8"))
        }
        if let sound { try write(mediaPlaylist(sound), to: work.appendingPathComponent("\(Self.audioFolder)/index.m3u8")) }
        try write(masterPlaylist(plan, ladder: ladder, tracks: tracks, sound: sound), to: work.appendingPathComponent(master.lastPathComponent))
        try write(dashManifest(plan, ladder: ladder, tracks: tracks, sound: sound), to: work.appendingPathComponent(Self.dashManifestName))
        let thumbnails = try writeThumbnails(plan, ladder: ladder, tracks: tracks, into: work)

        // Into place: the folders, the thumbnails and the manifest, then the master playlist.
        let names = ladder.renditions.map(\.name) + (sound == nil ? [] : [Self.audioFolder]) + thumbnails
            + [Self.dashManifestName, master.lastPathComponent]
        for name in names {
            let destination = folder.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: work.appendingPathComponent(name), to: destination)
        }
        let bytes = (tracks + (sound.map { [$0] } ?? [])).reduce(0) { $0 + $1.byteCount }
        return Report(frames: plan.frameCount, audioPackets: sound?.segments.count ?? 0, byteCount: bytes,
                      loudness: nil)
    }

    /// The folder of the audio rendition group (a name `RenditionLadder` keeps from renditions).
    public static let audioFolder = RenditionLadder.audioFolder
    public static let dashManifestName = "manifest.mpd"

    /// Splits `chunks` (in order) into `folder/init.mp4` and numbered segments, checking they
    /// share one init segment and, for video, hold one fragment of `segmentFrames` frames per
    /// segment (the last one shorter).
    static func package(_ chunks: [ChunkArtifact], folder: String, into work: URL, segmentFrames: Int?) throws -> PackagedTrack {
        let directory = work.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var initSegment: [UInt8]?, segments: [LadderSegment] = []
        var timescale = 0, trexDuration = 0, codec = ""
        for chunk in chunks {
            let split = try FragmentedMP4.split(Array(try Data(contentsOf: URL(fileURLWithPath: chunk.path))))
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

    static func masterPlaylist(_ plan: RenderPlan, ladder: RenditionLadder, tracks: [PackagedTrack], sound: PackagedTrack?) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        if let sound {
            lines.append(#"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,"#
                         + #"CHANNELS="\#(plan.export.audio.channels)",URI="\#(sound.folder)/index.m3u8""#)
        }
        let frameRate = String(format: "%.3f", (Rational.one / plan.frameDuration).seconds)
        for (rendition, track) in zip(ladder.renditions, tracks) {
            let peak = track.peakBitRate + (sound?.peakBitRate ?? 0)
            let average = track.averageBitRate + (sound?.averageBitRate ?? 0)
            let codecs = [track.codec] + (sound.map { [$0.codec] } ?? [])
            lines.append("#EXT-X-STREAM-INF:BANDWIDTH=\(peak),AVERAGE-BANDWIDTH=\(average),CODECS=\"\(codecs.joined(separator: ","))\","
                         + "RESOLUTION=\(rendition.size.width)x\(rendition.size.height),FRAME-RATE=\(frameRate)"
                         + (sound == nil ? "" : #",AUDIO="audio""#))
            lines.append("\(rendition.name)/index.m3u8")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func dashManifest(_ plan: RenderPlan, ladder: RenditionLadder, tracks: [PackagedTrack], sound: PackagedTrack?) -> String {
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
        let longest = max(ladder.segmentDuration.seconds, sound.map { s in s.segments.map { s.seconds($0) }.max() ?? 0 } ?? 0)
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
        if let sound {
            xml.append(#"    <AdaptationSet id="1" contentType="audio" mimeType="audio/mp4" segmentAlignment="true">"#)
            xml.append("      <Representation id=\"audio\" bandwidth=\"\(sound.peakBitRate)\" codecs=\"\(sound.codec)\" "
                       + "audioSamplingRate=\"\(plan.export.audio.sampleRate)\">")
            xml.append("        <AudioChannelConfiguration schemeIdUri=\"urn:mpeg:dash:23003:3:audio_channel_configuration:2011\" "
                       + "value=\"\(plan.export.audio.channels)\"/>")
            xml.append("        " + template(sound))
            xml.append("      </Representation>")
            xml.append("    </AdaptationSet>")
        }
        xml += ["  </Period>", "</MPD>"]
        return xml.joined(separator: "\n") + "\n"
    }

    static func write(_ text: String, to url: URL) throws {
        try Data(text.utf8).write(to: url)
    }
}
