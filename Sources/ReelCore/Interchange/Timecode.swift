/// SMPTE timecode `HH:MM:SS:FF` as an exact frame number, non-drop-frame or drop-frame.
///
/// A timecode counts frames at a nominal whole rate (24, 25, 30, …). At an NTSC rate
/// (`n·1000/1001`) the nominal rate is `n`. **Non-drop-frame** numbers every frame:
/// `frame = ((HH·60 + MM)·60 + SS)·n + FF`. **Drop-frame** (nominal 30 or 60 only) skips the
/// labels `;00` and `;01` (`;00`–`;03` at 60) at the start of every minute except every tenth,
/// so the label stays close to the wall clock; the frame number is the non-drop count minus the
/// skipped labels: `2·(totalMinutes − totalMinutes/10)` at 30 (4· at 60). A label that drop-frame
/// skips does not exist and is an error.
public struct Timecode: Hashable, Sendable, CustomStringConvertible {
    public var hours: Int64, minutes: Int64, seconds: Int64, frames: Int64

    /// Parses `HH:MM:SS:FF`; `;` or `.` may separate the fields (`;` before the frames
    /// conventionally marks drop-frame, but the list's `FCM` decides).
    public init?(parsing text: Substring) {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == ":" || $0 == ";" || $0 == "." }
        guard parts.count == 4, parts.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy(\.isWholeNumber) && $0.allSatisfy(\.isASCII) }),
              let h = Int64(parts[0]), let m = Int64(parts[1]), let s = Int64(parts[2]), let f = Int64(parts[3]) else { return nil }
        hours = h; minutes = m; seconds = s; frames = f
    }

    public var description: String {
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(hours)):\(two(minutes)):\(two(seconds)):\(two(frames))"
    }

    /// The frame number this label names at `nominalRate` frames per second, or a reason it
    /// names none (a field out of range, a drop-frame label that is skipped).
    public func frameNumber(nominalRate: Int64, dropFrame: Bool) -> Result<Int64, TimecodeError> {
        guard minutes < 60, seconds < 60 else { return .failure(TimecodeError("\(self): minutes and seconds must be below 60")) }
        guard frames < nominalRate else { return .failure(TimecodeError("\(self): the frame field must be below \(nominalRate) at \(nominalRate) fps")) }
        let totalMinutes = hours * 60 + minutes
        let nominal = (totalMinutes * 60 + seconds) * nominalRate + frames
        guard dropFrame else { return .success(nominal) }
        guard nominalRate == 30 || nominalRate == 60 else {
            return .failure(TimecodeError("drop-frame timecode exists only at 29.97 and 59.94 fps, not at \(nominalRate) fps"))
        }
        let dropped = nominalRate / 15 // 2 labels per minute at 30, 4 at 60
        if seconds == 0, frames < dropped, minutes % 10 != 0 {
            return .failure(TimecodeError("\(self) does not exist in drop-frame timecode (frames 0…\(dropped - 1) of minute \(minutes) are skipped)"))
        }
        return .success(nominal - dropped * (totalMinutes - totalMinutes / 10))
    }
}

/// Why a timecode names no frame.
public struct TimecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
