#!/usr/bin/env bash
# Generates the sample media and composition under DIR (default ./sample) with ffmpeg's lavfi
# sources: clips of different sizes, frame rates and orientations (one portrait phone clip with
# rotation metadata), music, a logo with alpha. Nothing here is committed; it is made on demand.
set -euo pipefail
dir="${1:-sample}"
mkdir -p "$dir/clips"
ff() { ffmpeg -nostdin -v error -y "$@"; }

# 640x360 @ 25 fps with a 440 Hz tone, 4 s.
ff -f lavfi -i "testsrc2=size=640x360:rate=25:duration=4" -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=4" \
   -c:v libx264 -pix_fmt yuv420p -g 25 -c:a aac -shortest "$dir/clips/landscape.mp4"
# A phone clip: coded 640x360, 30000/1001 fps, stored with a 90° display matrix (shows portrait
# 360x640, turned clockwise like an iPhone portrait clip: ffprobe says "rotation of -90").
# ffmpeg 5.1 writes the rotation tag as a display matrix only when stream-copying.
ff -f lavfi -i "smptehdbars=size=640x360:rate=30000/1001:duration=4.5" -f lavfi -i "sine=frequency=660:sample_rate=48000:duration=4.5" \
   -vf "drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='TOP':fontsize=60:x=20:y=20:fontcolor=white" \
   -c:v libx264 -pix_fmt yuv420p -c:a aac -shortest "$dir/clips/.portrait-unrotated.mp4"
ff -i "$dir/clips/.portrait-unrotated.mp4" -c copy -metadata:s:v:0 rotate=270 "$dir/clips/portrait.mp4"
rm -f "$dir/clips/.portrait-unrotated.mp4"
# 480x270 @ 30 fps, 5.1 audio, 4 s.
ff -f lavfi -i "mandelbrot=size=480x270:rate=30" -f lavfi -i "sine=frequency=330:sample_rate=48000" -t 4 \
   -filter_complex "[1]pan=5.1|FL=c0|FR=c0|FC=c0|LFE=0*c0|BL=c0|BR=c0[a]" -map 0:v -map "[a]" \
   -c:v libx264 -pix_fmt yuv420p -c:a aac "$dir/clips/wide.mp4"
# Music: a chord, 44.1 kHz stereo, 14 s.
ff -f lavfi -i "sine=frequency=262:sample_rate=44100:duration=14" -f lavfi -i "sine=frequency=392:sample_rate=44100:duration=14" \
   -filter_complex "[0][1]amerge=inputs=2,volume=0.5[a]" -map "[a]" -c:a aac "$dir/music.m4a"
# An orange disc with a notch (so its rotation shows) on a transparent background.
ff -f lavfi -i "color=c=orange:size=128x128,format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(lt(hypot(X-64,Y-64),58)*not(gt(X,64)*lt(Y,64)*lt(abs(Y-64),abs(X-64))),255,0)'" \
   -frames:v 1 "$dir/logo.png"

cat > "$dir/sample.json" <<'JSON'
{
  "formatVersion": 1,
  "assets": {
    "landscape": {"url": "clips/landscape.mp4"},
    "portrait":  {"url": "clips/portrait.mp4"},
    "wide":      {"url": "clips/wide.mp4"},
    "music":     {"url": "music.m4a"},
    "logo":      {"url": "logo.png"}
  },
  "tracks": [
    {"id": 1, "mediaType": "video", "segments": [
      {"asset": "landscape", "at": 0},
      {"asset": "wide", "at": 7}
    ]},
    {"id": 2, "mediaType": "video", "segments": [
      {"asset": "portrait", "at": 3}
    ]},
    {"id": 3, "mediaType": "audio", "segments": [
      {"asset": "music", "sourceRange": {"start": 1, "duration": 11}, "at": 0}
    ]},
    {"id": 4, "mediaType": "audio", "segments": [
      {"asset": "landscape", "at": 0}
    ]}
  ],
  "audioMix": [
    {"track": 3, "volume": 0.6, "volumeRamps": [{"from": 0.6, "to": 0.0, "timeRange": {"start": 9, "duration": 2}}]}
  ],
  "videoComposition": {
    "renderSize": {"width": 640, "height": 360},
    "frameDuration": "1/30",
    "instructions": [
      {"timeRange": {"start": 0, "duration": 3},
       "layerInstructions": [{"track": 1, "transform": {"a": 1, "b": 0, "c": 0, "d": 1, "tx": 0, "ty": 0}}]},
      {"timeRange": {"start": 3, "duration": 1}, "backgroundColor": "#102030",
       "layerInstructions": [
         {"track": 2, "transform": {"a": 0, "b": 0.5625, "c": -0.5625, "d": 0, "tx": 421.25, "ty": 0},
          "opacityRamps": [{"from": 0.0, "to": 1.0, "timeRange": {"start": 3, "duration": 1}}]},
         {"track": 1}
       ]},
      {"timeRange": {"start": 4, "duration": 3}, "backgroundColor": "#102030",
       "layerInstructions": [
         {"track": 2, "transform": {"a": 0, "b": 0.5625, "c": -0.5625, "d": 0, "tx": 421.25, "ty": 0},
          "opacityRamps": [{"from": 1.0, "to": 0.0, "timeRange": {"start": 5.5, "duration": 1.5}}]}
       ]},
      {"timeRange": {"start": 7, "duration": 4},
       "layerInstructions": [{"track": 1,
          "transform": {"a": 1.3333333, "b": 0, "c": 0, "d": 1.3333333, "tx": 0, "ty": 0}}]}
    ],
    "overlays": [
      {"image": "logo", "frame": {"x": 540, "y": 20, "width": 80, "height": 80}, "opacity": 0.9,
       "animations": [{"property": "rotation", "from": 0, "to": 6.283185, "duration": 2, "repeat": true}]},
      {"text": "Reel 样片 · 加点水印看看效果", "fontSize": 28, "color": "#FFFFFF",
       "frame": {"x": 20, "y": 310, "width": 600, "height": 40}}
    ]
  },
  "export": {"preset": "medium", "fileType": "mp4", "optimizeForNetworkUse": true}
}
JSON
echo "$dir/sample.json"
