/// The tracks after validation: usable media segments per track (sorted by `at`) and the
/// composition duration (end of the last segment, empty ones included).
struct CheckedTracks {
    var video: [PlannedTrack] = []
    var audio: [PlannedTrack] = []
    var duration: Rational = .zero
    /// JSON path of the segment that ends last (where a too-long composition is reported).
    var durationPath: String?
    /// Track id → media type, for the first track with each id.
    var mediaTypes: [Int: MediaType] = [:]
    /// Subtitle tracks with their placed cues (they do not count towards `duration`).
    var subtitle: [CheckedSubtitleTrack] = []
}

extension ValidationRun {
    func checkTracks() -> CheckedTracks {
        var result = CheckedTracks()
        var firstIndexOfID: [Int: Int] = [:]
        for (t, track) in composition.tracks.enumerated() {
            let path = "tracks[\(t)]"
            if track.id <= 0 { report("\(path).id", "must be > 0") }
            if let first = firstIndexOfID[track.id] {
                report("\(path).id", "duplicate track id \(track.id) (also tracks[\(first)])")
            } else {
                firstIndexOfID[track.id] = t
                result.mediaTypes[track.id] = track.mediaType
            }

            var occupied: [(index: Int, range: TimeRange, path: String)] = []
            var segments: [PlannedSegment] = []
            var cues: [SubtitleCue] = []
            // Where the previous segment ends: the start of a segment without `at`. Nil after a
            // segment that could not be placed (its problem is reported; the next waits for it).
            var previousEnd: Rational? = .zero
            for (s, segment) in track.segments.enumerated() {
                let segmentPath = "\(path).segments[\(s)]"
                switch segment {
                case .empty(let range):
                    let usable = checkRange(range, at: "\(segmentPath).empty")
                    if usable { occupied.append((s, range, "\(segmentPath).empty")) }
                    previousEnd = usable ? range.end : nil
                case .media(let media) where track.mediaType == .subtitle:
                    guard let start = media.at ?? previousEnd,
                          let placed = checkSubtitleSegment(media, start: start, at: segmentPath) else { previousEnd = nil; continue }
                    cues += placed.cues
                    occupied.append((s, placed.range, segmentPath))
                    previousEnd = placed.range.end
                case .media(let media):
                    guard let start = media.at ?? previousEnd,
                          let planned = checkSegment(media, start: start, in: track.mediaType, at: segmentPath) else { previousEnd = nil; continue }
                    segments.append(planned)
                    occupied.append((s, planned.timeRange, segmentPath))
                    previousEnd = planned.timeRange.end
                }
            }
            checkOverlaps(occupied.map { ($0.index, $0.range) }, trackPath: path)
            for entry in occupied where entry.range.end > result.duration && track.mediaType != .subtitle {
                result.duration = entry.range.end
                result.durationPath = entry.path
            }
            let planned = PlannedTrack(id: track.id, segments: segments.sorted { $0.at < $1.at })
            switch track.mediaType {
            case .video: result.video.append(planned)
            case .audio: result.audio.append(planned)
            case .subtitle: result.subtitle.append(CheckedSubtitleTrack(index: t, track: track, cues: cues))
            }
        }
        return result
    }

    /// Validates one media segment against its asset; returns it resolved, or nil when it
    /// cannot be placed (unknown or unavailable asset, bad range).
    /// `start`: the segment's `at`, or where the previous segment ends when it has none.
    private func checkSegment(_ media: MediaSegment, start: Rational, in mediaType: MediaType, at path: String) -> PlannedSegment? {
        var ok = true
        if start < .zero { report("\(path).at", "must be ≥ 0"); ok = false }
        guard composition.assets[media.asset] != nil else {
            report("\(path).asset", "unknown asset \"\(media.asset)\"")
            return nil
        }
        // An unavailable asset is reported once, under assets.<id>.url.
        guard let asset = described[media.asset]?.description else { return nil }

        switch mediaType {
        case _ where asset.kind == .subtitle:
            report("\(path).asset", "asset \"\(media.asset)\" is a subtitle file; place it in a subtitle track (\"mediaType\": \"subtitle\") or in videoComposition.captions")
            return nil
        case .video where asset.video == nil:
            report("\(path).asset", "asset \"\(media.asset)\" has no video; it cannot be in a video track")
            ok = false
        case .audio where asset.kind == .still:
            report("\(path).asset", "asset \"\(media.asset)\" is a still image; it cannot be in an audio track")
            ok = false
        case .audio where asset.audio == nil:
            report("\(path).asset", "asset \"\(media.asset)\" has no audio; it cannot be in an audio track")
            ok = false
        default:
            break
        }

        if asset.kind == .still {
            if media.sourceRange != nil {
                report("\(path).sourceRange", "a still image has no source range; give its duration instead")
                ok = false
            }
            guard let duration = media.duration else {
                report("\(path).duration", "is required for a still image")
                return nil
            }
            if duration <= .zero { report("\(path).duration", "must be > 0"); ok = false }
            return ok ? PlannedSegment(asset: media.asset, sourceStart: .zero, at: start, duration: duration) : nil
        }

        if media.duration != nil && media.sourceRange == nil {
            report("\(path).duration", "on timed media, duration changes the speed of a sourceRange: give the sourceRange to play (trim with sourceRange alone)")
            ok = false
        }
        guard let assetDuration = asset.duration, assetDuration > .zero else {
            report("\(path).asset", "asset \"\(media.asset)\" has no known duration")
            return nil
        }
        if media.sourceRange == nil {
            // The whole asset: its duration joins the composition's timescale.
            let joined = includeDerivedTime(assetDuration, at: "\(path).asset",
                "asset \"\(media.asset)\" lasts \(TimeFormatting.seconds(assetDuration)), which cannot be placed exactly on this "
                + "composition's timeline (its time base is unusual); give the segment a sourceRange")
            if !joined { return nil }
        }
        let range = media.sourceRange ?? TimeRange(start: .zero, duration: assetDuration)
        if media.sourceRange != nil {
            if !checkRange(range, at: "\(path).sourceRange") { return nil }
            if range.end > assetDuration {
                report("\(path).sourceRange", "ends at \(TimeFormatting.seconds(range.end)), beyond the end of asset \"\(media.asset)\" (\(TimeFormatting.seconds(assetDuration)))")
                ok = false
            }
        }
        var duration = range.duration
        if let scaled = media.duration, media.sourceRange != nil {
            if scaled <= .zero {
                report("\(path).duration", "must be > 0"); ok = false
            } else if range.duration > .zero {
                duration = scaled
                if let problem = SegmentSpeed.problem(sourceDuration: range.duration, duration: scaled) {
                    report("\(path).duration", problem); ok = false
                }
            }
        }
        return ok ? PlannedSegment(asset: media.asset, sourceStart: range.start, at: start, duration: duration, sourceDuration: range.duration) : nil
    }

    /// Reports each segment that starts before an earlier-starting one has ended.
    private func checkOverlaps(_ occupied: [(index: Int, range: TimeRange)], trackPath: String) {
        let sorted = occupied.sorted { ($0.range.start, $0.index) < ($1.range.start, $1.index) }
        var latest: (index: Int, range: TimeRange)?
        for entry in sorted {
            if let previous = latest, entry.range.start < previous.range.end {
                report("\(trackPath).segments[\(entry.index)]",
                       "overlaps segments[\(previous.index)] from \(TimeFormatting.seconds(entry.range.start)) to \(TimeFormatting.seconds(min(entry.range.end, previous.range.end)))")
            }
            if latest == nil || entry.range.end > latest!.range.end { latest = entry }
        }
    }

    /// Applies `audioMix` to the audio tracks: every audio track plays at volume 1 unless
    /// parameters say otherwise.
    func checkAudioMix(tracks: CheckedTracks) -> [PlannedAudioTrack] {
        var parameters: [Int: (volume: Double, ramps: [Ramp<Double>], algorithm: AudioTimePitchAlgorithm, duck: Ducking?)] = [:]
        var firstIndex: [Int: Int] = [:]
        for (m, mix) in composition.audioMix.enumerated() {
            let path = "audioMix[\(m)]"
            if mix.volume < 0 { report("\(path).volume", "must be ≥ 0") }
            let ramps = checkRamps(mix.volumeRamps, at: "\(path).volumeRamps", name: "volumeRamps") { value, p in
                if value < 0 { self.report(p, "must be ≥ 0") }
            }
            switch tracks.mediaTypes[mix.track] {
            case nil:
                report("\(path).track", "no track with id \(mix.track)")
            case .video, .subtitle:
                report("\(path).track", "track \(mix.track) is a \(tracks.mediaTypes[mix.track]!.rawValue) track; audioMix needs an audio track")
            case .audio:
                if let first = firstIndex[mix.track] {
                    report("\(path).track", "track \(mix.track) already has parameters in audioMix[\(first)]")
                } else {
                    firstIndex[mix.track] = m
                    parameters[mix.track] = (mix.volume, ramps, mix.audioTimePitchAlgorithm, mix.duck)
                }
            }
            if let duck = mix.duck { checkDucking(duck, of: mix.track, at: "\(path).duck", tracks: tracks) }
        }
        return tracks.audio.map { track in
            let p = parameters[track.id]
            return PlannedAudioTrack(id: track.id, segments: track.segments, volume: p?.volume ?? 1, volumeRamps: p?.ramps ?? [],
                                     timePitchAlgorithm: p?.algorithm ?? .spectral, duck: p?.duck)
        }
    }

    /// `duck` names other audio tracks, and its figures are in range.
    private func checkDucking(_ duck: Ducking, of track: Int, at path: String, tracks: CheckedTracks) {
        if duck.under.isEmpty { report("\(path).under", "must name at least one audio track whose sound makes track \(track) dip") }
        for (i, id) in duck.under.enumerated() {
            let p = "\(path).under[\(i)]"
            switch tracks.mediaTypes[id] {
            case nil: report(p, "no track with id \(id)")
            case .video, .subtitle: report(p, "track \(id) is a \(tracks.mediaTypes[id]!.rawValue) track; a track ducks under audio tracks")
            case .audio:
                if id == track { report(p, "track \(id) cannot duck under itself") }
                if duck.under[..<i].contains(id) { report(p, "track \(id) is listed twice") }
            }
        }
        if !(duck.amount > 0 && duck.amount <= 96) { report("\(path).amount", "must be a positive number of decibels, at most 96 (12 makes the track 12 dB quieter)") }
        if !(duck.threshold >= -120 && duck.threshold <= 0) { report("\(path).threshold", "must be a level in dBFS between -120 and 0") }
        if !(duck.attack >= 0 && duck.attack <= 60) { report("\(path).attack", "must be between 0 and 60 seconds") }
        if !(duck.release >= 0 && duck.release <= 60) { report("\(path).release", "must be between 0 and 60 seconds") }
    }
}
