import Foundation
import ReelCore

/// Reads and adjusts the boxes of a fragmented MP4 (ISO/IEC 14496-12) as libavformat's MP4
/// muxer writes it for `MovieWriter(fragmented: true)`: an init segment (`ftyp` + `moov`), then
/// one `moof` + `mdat` pair per fragment. Only the few fields HLS/DASH packaging needs are read
/// or written; sample data is never touched.
public enum FragmentedMP4 {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// One box: its four-character type and where it lies in the bytes it was read from.
    public struct Box: Sendable {
        public var type: String
        /// The whole box, header included.
        public var range: Range<Int>
        /// Where its payload starts (after the size, type and any 64-bit size).
        public var payloadStart: Int
    }

    /// The boxes of `bytes[range]`, in order.
    public static func boxes(_ bytes: [UInt8], in range: Range<Int>? = nil) throws -> [Box] {
        let range = range ?? 0..<bytes.count
        var boxes: [Box] = [], at = range.lowerBound
        while at < range.upperBound {
            guard range.upperBound - at >= 8 else { throw Failure(description: "a box header is cut off at byte \(at)") }
            var size = Int(readUInt32(bytes, at)), header = 8
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            if size == 1 {
                guard range.upperBound - at >= 16 else { throw Failure(description: "a 64-bit box size is cut off at byte \(at)") }
                size = Int(readUInt64(bytes, at + 8)); header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, at + size <= range.upperBound else {
                throw Failure(description: "the \(type) box at byte \(at) claims \(size) bytes, past the end")
            }
            boxes.append(Box(type: type, range: at..<(at + size), payloadStart: at + header))
            at += size
        }
        return boxes
    }

    /// The first box of type `path[0]`, then inside it `path[1]`, and so on.
    public static func find(_ path: [String], in bytes: [UInt8], within range: Range<Int>? = nil) throws -> Box? {
        guard let first = path.first else { return nil }
        guard let box = try boxes(bytes, in: range).first(where: { $0.type == first }) else { return nil }
        if path.count == 1 { return box }
        // Sample entries have fields before their child boxes; only plain containers are walked.
        return try find(Array(path.dropFirst()), in: bytes, within: box.payloadStart..<box.range.upperBound)
    }

    /// A file split into its init segment and its fragments (each a `moof` + `mdat`, with any
    /// `styp` or `sidx` before them left out).
    public struct Split {
        public var initSegment: [UInt8]
        public var fragments: [[UInt8]]
    }

    /// Fragmented MP4 files written one after another (a ladder's audio outputs,
    /// `ChunkRenderer.renderLadderAudio`), parted at each top-level `ftyp` box.
    public static func files(_ bytes: [UInt8]) throws -> [[UInt8]] {
        let starts = try boxes(bytes).filter { $0.type == "ftyp" }.map(\.range.lowerBound)
        guard starts.first == 0 else { throw Failure(description: "does not start with an ftyp box: not an MP4 file") }
        return starts.indices.map { i in Array(bytes[starts[i]..<(i + 1 < starts.count ? starts[i + 1] : bytes.count)]) }
    }

    public static func split(_ bytes: [UInt8]) throws -> Split {
        let top = try boxes(bytes)
        guard let firstMoof = top.firstIndex(where: { $0.type == "moof" }) else {
            throw Failure(description: "no fragment (moof box): not a fragmented MP4")
        }
        guard top[..<firstMoof].contains(where: { $0.type == "moov" }) else { throw Failure(description: "no moov box before the first fragment") }
        let initSegment = Array(bytes[0..<top[firstMoof].range.lowerBound])
        var fragments: [[UInt8]] = [], index = firstMoof
        while index < top.count {
            let box = top[index]
            switch box.type {
            case "moof":
                guard index + 1 < top.count, top[index + 1].type == "mdat" else {
                    throw Failure(description: "the moof box at byte \(box.range.lowerBound) is not followed by its mdat")
                }
                fragments.append(Array(bytes[box.range.lowerBound..<top[index + 1].range.upperBound]))
                index += 2
            case "styp", "sidx", "free", "skip":
                index += 1
            default:
                throw Failure(description: "unexpected \(box.type) box among the fragments at byte \(box.range.lowerBound)")
            }
        }
        return Split(initSegment: initSegment, fragments: fragments)
    }

    /// The media timescale (ticks per second) of the init segment's first track.
    public static func timescale(initSegment bytes: [UInt8]) throws -> Int {
        guard let mdhd = try find(["moov", "trak", "mdia", "mdhd"], in: bytes) else { throw Failure(description: "no mdhd box in the init segment") }
        let version = bytes[mdhd.payloadStart]
        return Int(readUInt32(bytes, mdhd.payloadStart + (version == 1 ? 20 : 12)))
    }

    /// The default sample duration of the init segment's `trex` (0 when absent).
    public static func defaultSampleDuration(initSegment bytes: [UInt8]) throws -> Int {
        guard let trex = try find(["moov", "mvex", "trex"], in: bytes) else { return 0 }
        return Int(readUInt32(bytes, trex.payloadStart + 12))
    }

    /// What a fragment holds: its first decode time (`tfdt`), its sample count and its total
    /// duration in ticks, summed from its samples (`trun`, else `tfhd`'s or `trex`'s default).
    public struct FragmentTiming: Sendable, Equatable {
        public var decodeTime: Int
        public var samples: Int
        public var duration: Int
    }

    public static func timing(of fragment: [UInt8], defaultSampleDuration trexDuration: Int) throws -> FragmentTiming {
        guard let traf = try find(["moof", "traf"], in: fragment) else { throw Failure(description: "a fragment without a traf box") }
        let inside = traf.payloadStart..<traf.range.upperBound
        let children = try boxes(fragment, in: inside)
        guard let tfdt = children.first(where: { $0.type == "tfdt" }) else { throw Failure(description: "a fragment without a tfdt box") }
        let decodeTime = fragment[tfdt.payloadStart] == 1 ? Int(readUInt64(fragment, tfdt.payloadStart + 4)) : Int(readUInt32(fragment, tfdt.payloadStart + 4))
        var defaultDuration = trexDuration
        if let tfhd = children.first(where: { $0.type == "tfhd" }) {
            let flags = Int(readUInt32(fragment, tfhd.payloadStart)) & 0xFFFFFF
            var at = tfhd.payloadStart + 8
            if flags & 0x01 != 0 { at += 8 }   // base-data-offset
            if flags & 0x02 != 0 { at += 4 }   // sample-description-index
            if flags & 0x08 != 0 { defaultDuration = Int(readUInt32(fragment, at)) }
        }
        var samples = 0, duration = 0
        for trun in children where trun.type == "trun" {
            let flags = Int(readUInt32(fragment, trun.payloadStart)) & 0xFFFFFF
            let count = Int(readUInt32(fragment, trun.payloadStart + 4))
            var at = trun.payloadStart + 8
            if flags & 0x01 != 0 { at += 4 }   // data-offset
            if flags & 0x04 != 0 { at += 4 }   // first-sample-flags
            let fields = [0x100, 0x200, 0x400, 0x800].filter { flags & $0 != 0 }.count
            for _ in 0..<count {
                duration += flags & 0x100 != 0 ? Int(readUInt32(fragment, at)) : defaultDuration
                at += 4 * fields
            }
            samples += count
        }
        return FragmentTiming(decodeTime: decodeTime, samples: samples, duration: duration)
    }

    /// `fragment` with `ticks` added to its decode time (`tfdt`, written as version 1 by
    /// libavformat) and its sequence number (`mfhd`) set to `sequenceNumber`: a chunk's
    /// fragments start at decode time 0, and become the job's by this shift.
    public static func shifted(_ fragment: [UInt8], byTicks ticks: Int, sequenceNumber: UInt32) throws -> [UInt8] {
        var out = fragment
        guard let mfhd = try find(["moof", "mfhd"], in: fragment), let tfdt = try find(["moof", "traf", "tfdt"], in: fragment) else {
            throw Failure(description: "a fragment without an mfhd or tfdt box")
        }
        writeUInt32(&out, mfhd.payloadStart + 4, sequenceNumber)
        if fragment[tfdt.payloadStart] == 1 {
            writeUInt64(&out, tfdt.payloadStart + 4, readUInt64(fragment, tfdt.payloadStart + 4) + UInt64(ticks))
        } else {
            let time = UInt64(readUInt32(fragment, tfdt.payloadStart + 4)) + UInt64(ticks)
            guard time <= UInt64(UInt32.max) else { throw Failure(description: "a version 0 tfdt cannot hold decode time \(time)") }
            writeUInt32(&out, tfdt.payloadStart + 4, UInt32(time))
        }
        return out
    }

    /// The RFC 6381 codec string of the init segment's first track: `avc1.PPCCLL` from its
    /// `avcC` (profile, constraint flags, level), or `mp4a.40.2` for AAC-LC (`mp4a` entry).
    public static func codecString(initSegment bytes: [UInt8]) throws -> String {
        guard let stsd = try find(["moov", "trak", "mdia", "minf", "stbl", "stsd"], in: bytes) else {
            throw Failure(description: "no stsd box in the init segment")
        }
        // stsd: version/flags, entry count, then the first sample entry.
        let entries = try boxes(bytes, in: (stsd.payloadStart + 8)..<stsd.range.upperBound)
        guard let entry = entries.first else { throw Failure(description: "an empty stsd box") }
        switch entry.type {
        case "avc1", "avc3":
            // A visual sample entry has 78 bytes of fields before its child boxes.
            let children = try boxes(bytes, in: (entry.payloadStart + 78)..<entry.range.upperBound)
            guard let avcC = children.first(where: { $0.type == "avcC" }) else { throw Failure(description: "no avcC box in the avc1 entry") }
            let p = avcC.payloadStart
            return entry.type + "." + FileDigest.hex(bytes[(p + 1)...(p + 3)]).uppercased()
        case "mp4a":
            return "mp4a.40.2"
        default:
            throw Failure(description: "codec \(entry.type) has no codec string here")
        }
    }

    static func readUInt32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
    }
    static func readUInt64(_ b: [UInt8], _ at: Int) -> UInt64 { UInt64(readUInt32(b, at)) << 32 | UInt64(readUInt32(b, at + 4)) }
    static func writeUInt32(_ b: inout [UInt8], _ at: Int, _ v: UInt32) {
        for i in 0..<4 { b[at + i] = UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32(i))) }
    }
    static func writeUInt64(_ b: inout [UInt8], _ at: Int, _ v: UInt64) {
        writeUInt32(&b, at, UInt32(truncatingIfNeeded: v >> 32)); writeUInt32(&b, at + 4, UInt32(truncatingIfNeeded: v))
    }
}
