@testable import ReelCore

/// Probe results and compositions shared by the tests. Descriptions are built by hand (the
/// pure core never reads files), with values chosen so expected numbers can be worked out on paper.
enum Fixtures {
    static func movie(_ width: Int, _ height: Int, duration: Rational, frameDuration: Rational? = Rational(1, 30),
                      transform: AffineTransform = .identity, audio: Bool = true) -> AssetDescription {
        AssetDescription(kind: .movie, duration: duration,
                         video: VideoTrackDescription(naturalSize: PixelSize(width: width, height: height), preferredTransform: transform,
                                                      frameDuration: frameDuration, hasAlpha: false, codec: "h264"),
                         audio: audio ? AudioTrackDescription(sampleRate: 48000, channels: 2, codec: "aac") : nil)
    }

    static func sound(duration: Rational) -> AssetDescription {
        AssetDescription(kind: .audio, duration: duration, video: nil,
                         audio: AudioTrackDescription(sampleRate: 44100, channels: 2, codec: "aac"))
    }

    static func still(_ width: Int, _ height: Int) -> AssetDescription {
        AssetDescription(kind: .still, duration: nil,
                         video: VideoTrackDescription(naturalSize: PixelSize(width: width, height: height), preferredTransform: .identity,
                                                      frameDuration: nil, hasAlpha: true, codec: "png"),
                         audio: nil)
    }

    /// A 90° clockwise phone clip: encoded `width`×`height`, displayed `height`×`width`.
    static func portraitTransform(encodedHeight h: Int) -> AffineTransform {
        AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: Double(h), ty: 0)
    }

    static func described(_ table: [String: AssetDescription]) -> [String: AssetResolution] {
        table.mapValues { .described(url: "/media/x", $0) }
    }

    /// Assets used by the rule tests: `a` movie 1920x1080 10 s with audio, `s` still 400x300,
    /// `m` audio-only 20 s, `n` movie without audio 5 s, `gone` missing.
    static let ruleAssets: [String: AssetResolution] = described([
        "a": movie(1920, 1080, duration: Rational(10)),
        "s": still(400, 300),
        "m": sound(duration: Rational(20)),
        "n": movie(640, 360, duration: Rational(5), audio: false),
    ]).merging(["gone": .unavailable(reason: "no such file")]) { $1 }

    static let ruleAssetsJSON = #""assets": {"a": {"url": "a.mp4"}, "s": {"url": "s.png"}, "m": {"url": "m.m4a"}, "n": {"url": "n.mp4"}}"#

    /// A valid composition (10 s of `a` on video track 1, `m` 0…10 s on audio track 2), with
    /// any section replaceable. Without `videoComposition` the §3.2 defaults apply.
    static func composition(version: Int = 1, assets: String = ruleAssetsJSON,
                            tracks: String = #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}, {"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0, "sourceRange": {"start": 0, "duration": 10}}]}]"#,
                            extra: String = "") -> String {
        #"{"formatVersion": \#(version), \#(assets), "tracks": \#(tracks)\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    /// The composition format's original reference example with concrete values for its `{...}` and the asset `main` it uses
    /// but does not declare.
    static let designExample = #"""
    {
      "formatVersion": 1,
      "assets": {
        "intro": {"url": "clips/intro.mp4"},
        "main":  {"url": "clips/main.mp4"},
        "music": {"url": "music.m4a"},
        "logo":  {"url": "logo.png"}
      },
      "tracks": [
        {"id": 1, "mediaType": "video", "segments": [
          {"asset": "intro", "sourceRange": {"start": 0, "duration": 4}, "at": 0},
          {"asset": "main",  "at": 4},
          {"asset": "logo",  "at": 9, "duration": 3},
          {"empty": {"start": 12, "duration": 1}}
        ]},
        {"id": 2, "mediaType": "audio", "segments": [
          {"asset": "music", "sourceRange": {"start": 10, "duration": 13}, "at": 0},
          {"asset": "intro", "at": 0}
        ]}
      ],
      "audioMix": [
        {"track": 2, "volume": 0.8,
         "volumeRamps": [{"from": 0.8, "to": 0.0, "timeRange": {"start": 10, "duration": 3}}]}
      ],
      "videoComposition": {
        "renderSize": {"width": 1280, "height": 720},
        "frameDuration": "1/30",
        "instructions": [
          {"timeRange": {"start": 0, "duration": 4}, "backgroundColor": "#000000",
           "layerInstructions": [
             {"track": 1,
              "transform": "preferred",
              "transformRamps": [{"from": {"a":1,"b":0,"c":0,"d":1,"tx":0,"ty":0},
                                  "to": {"a":0.5,"b":0,"c":0,"d":0.5,"tx":320,"ty":180},
                                  "timeRange": {"start": 0, "duration": 2}}],
              "opacity": 1.0,
              "opacityRamps": [{"from": 1.0, "to": 0.0, "timeRange": {"start": 3, "duration": 1}}],
              "cropRectangle": {"x": 0, "y": 0, "width": 1280, "height": 720}}
           ]}
        ],
        "overlays": [
          {"image": "logo", "frame": {"x": 1100, "y": 40, "width": 130, "height": 130}, "opacity": 0.9,
           "timeRange": {"start": 0, "duration": 13},
           "animations": [{"property": "rotation", "from": 0, "to": -6.283185, "duration": 2, "repeat": true}]},
          {"text": "加点水印看看效果", "font": "sans-serif", "fontSize": 30, "color": "#FFFFFF",
           "frame": {"x": 100, "y": 620, "width": 600, "height": 40}}
        ]
      },
      "export": {"preset": "highest", "fileType": "mp4", "optimizeForNetworkUse": true}
    }
    """#

    static let designExampleAssets: [String: AssetResolution] = described([
        "intro": movie(1280, 720, duration: Rational(4)),
        "main": movie(1280, 720, duration: Rational(5)),
        "music": sound(duration: Rational(30)),
        "logo": still(260, 260),
    ])

    static func parse(_ json: String) throws -> Composition {
        try Composition.parse(json)
    }

    /// Parses and validates, expecting success.
    static func plan(_ json: String, assets: [String: AssetResolution]) throws -> RenderPlan {
        try CompositionValidator.validate(try Composition.parse(json), assets: assets).get()
    }

    /// The problem lines of parsing + validating `json` (empty when valid).
    static func problems(_ json: String, assets: [String: AssetResolution] = ruleAssets) -> [String] {
        do {
            let composition = try Composition.parse(json)
            switch CompositionValidator.validate(composition, assets: assets) {
            case .success: return []
            case .failure(let error): return error.problems.map(\.description)
            }
        } catch {
            return error.problems.map(\.description)
        }
    }
}

/// Approximate equality for transforms built from floating-point geometry.
func approximatelyEqual(_ l: AffineTransform, _ r: AffineTransform, tolerance: Double = 1e-9) -> Bool {
    abs(l.a - r.a) <= tolerance && abs(l.b - r.b) <= tolerance && abs(l.c - r.c) <= tolerance
        && abs(l.d - r.d) <= tolerance && abs(l.tx - r.tx) <= tolerance && abs(l.ty - r.ty) <= tolerance
}

func approximatelyEqual(_ l: Point, _ r: Point, tolerance: Double = 1e-9) -> Bool {
    abs(l.x - r.x) <= tolerance && abs(l.y - r.y) <= tolerance
}
