// swift-tools-version:6.0
import PackageDescription

// The pixel kernels (ReelKernels) are compiled with -Ounchecked in release builds: they index
// through raw pointers on purpose and are guarded by a benchmark (ops/bench-compositor.sh), not
// by traps. Nothing else is: code that parses hostile media keeps every check.
let uncheckedKernels: [SwiftSetting] = [.unsafeFlags(["-Ounchecked", "-wmo"], .when(configuration: .release))]

let package = Package(
    name: "Reel",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "reel", targets: ["reel"]),
        .executable(name: "reel-chunkbench", targets: ["reel-chunkbench"]),
        .executable(name: "reel-dispatchbench", targets: ["reel-dispatchbench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        // 3.x or 4.x: jwt-kit 5 (the console's tokens) needs swift-crypto 4.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        // The operator console (HTTP API, dashboard, tokens).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // The S3 client's HTTP (ReelObjectStore).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // System libraries. The C shims wrap function-like macros Swift cannot import.
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat libavcodec libavutil libswscale libswresample",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2 fontconfig harfbuzz fribidi",
                       providers: [.apt(["libfreetype-dev", "libfontconfig-dev", "libharfbuzz-dev", "libfribidi-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // Loudness measurement (BS.1770-4 / EBU R128) for loudness normalisation and `reel loudness`.
        .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        // Rubber Band: time-stretching that keeps pitch (speed-changed audio, "spectral").
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),
        // zimg: colour-space conversion (matrix, range, transfer, primaries, depth, chroma siting)
        // of decoded sources into the composition's colour, and the linear light tone mapping needs.
        .systemLibrary(name: "CZimg", pkgConfig: "zimg", providers: [.apt(["libzimg-dev"])]),

        // Pure core: exact time, the composition model, validation, planning, content keys; the
        // helpers every floor above passes around: FileDigest (SHA-256 of bytes; of a file in
        // ReelMedia) and ByteRangeSource (random access to a file that may be elsewhere). No I/O.
        .target(name: "ReelCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // The compositor's pixel kernels (Compositing/Compositor.swift), the filter, LUT, chroma-key
        // and blend-mode kernels (Filters/) and the images they work on (-Ounchecked, see above).
        // Nothing here parses input: .cube files are parsed in ReelCore, media in ReelMedia.
        .target(name: "ReelKernels", dependencies: ["ReelCore", "CReelAVX2"], swiftSettings: uncheckedKernels),
        // Kernels for CPUs with AVX2 or AVX-512BW (functions compiled for them, called only where
        // cpuid says so: ReelKernels' VectorISA), giving the same bytes as their Swift versions;
        // contraction into fused multiply-adds is off so that they do. C, with the instruction set
        // on each function: a Swift module built with -mavx2 also emits the runtime's weak
        // value-witness helpers (__swift_memcpy…) with AVX instructions, and the linker may keep
        // those copies for the whole program, which would then fail on CPUs without AVX.
        .target(name: "CReelAVX2", cSettings: [.unsafeFlags(["-ffp-contract=off", "-O2"])]),
        // libav, text, audio mixing, encoding, muxing, and the finaliser that joins a job's chunks
        // (Chunks/Finaliser.swift); frames are composited through ReelKernels.
        .target(name: "ReelMedia", dependencies: [
            "ReelCore", "ReelKernels", "CFFmpeg", "CFreeType", "CEbur128", "CRubberBand", "CZimg",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // An agent's on-disk cache of remote assets, read by ReelMedia through `ByteRangeSource`.
        .target(name: "ReelAssetCache", dependencies: ["ReelCore"]),
        // The line protocol of proto/PROTOCOL.md: messages and their codec (Messages/), framing,
        // connection state machines, NIO server and client.
        .target(name: "ReelProtocol", dependencies: [
            "ReelCore", "ReelScheduling",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOExtras", package: "swift-nio-extras"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The scheduling vocabulary and pure policies (no I/O): TaskKind with its traits, the job,
        // task and agent states, Lease, ClaimPolicy (who gets which task), QuarantinePolicy.
        .target(name: "ReelScheduling"),
        // PostgreSQL through libpq, in parts: LifecycleStore (leases, claims and every task and
        // job transition, decided by Statements/Statements+Lifecycle.swift; docs/task-lifecycle.md),
        // JobStore, AgentStore, AssetStore, EventLog, ConsoleQueries; numbered migrations.
        .target(name: "ReelStore", dependencies: ["ReelCore", "ReelScheduling", "CLibPQ"]),
        // S3-compatible object storage: the SigV4 signer (pure), credentials, the S3 client, the
        // BlobStore interface of the farm's bytes (docs/object-storage.md) and its S3 side.
        .target(name: "ReelObjectStore", dependencies: [
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        // The coordinator: its services in one ServiceGroup (Coordinator.swift) — the reel/1
        // server with its claim dispatcher and result batches, the lease reaper, the finaliser
        // loop, the storage sweeper, the --metrics listener and the console; splitting jobs into tasks.
        .target(name: "ReelCoordinator", dependencies: [
            "ReelCore", "ReelMedia", "ReelProtocol", "ReelStore", "ReelScheduling", "ReelConsole", "ReelObjectStore",
            "ReelFinalising",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // The operator console: HTTP API, live stream, dashboard and tokens (Hummingbird, jwt-kit);
        // and the coordinator's --metrics listener (`MetricsListener`) on the same server.
        // Knows nothing of the store: the coordinator hands it a `ConsoleBackend`.
        // The dashboard's files are embedded in the code, so the one binary carries them.
        .target(name: "ReelConsole", dependencies: [
            "ReelCore", "ReelProtocol",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [
            .embedInCode("Dashboard/console.html"), .embedInCode("Dashboard/console.css"), .embedInCode("Dashboard/console.js"),
        ]),
        // Joining a job's results into its output: shared by the coordinator's finaliser and
        // agents that run finalise tasks (object storage).
        .target(name: "ReelFinalising", dependencies: ["ReelCore", "ReelMedia", "ReelProtocol", "ReelScheduling"]),
        // The agent service: claims tasks, renders them with ReelMedia, uploads results.
        .target(name: "ReelAgent", dependencies: [
            "ReelCore", "ReelMedia", "ReelAssetCache", "ReelProtocol", "ReelObjectStore", "ReelFinalising",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        .executableTarget(name: "reel", dependencies: [
            "ReelCore", "ReelKernels", "ReelMedia", "ReelProtocol", "ReelScheduling", "ReelStore", "ReelCoordinator", "ReelAgent", "ReelConsole", "ReelObjectStore",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),

        // Times the finaliser alone on kept chunks for ops/bench-chunks.sh; not part of the public CLI.
        .executableTarget(name: "reel-chunkbench", dependencies: ["ReelCore", "ReelMedia"]),

        // N simulated agents speaking reel/1 for ops/bench-dispatch.sh; not part of the public CLI.
        .executableTarget(name: "reel-dispatchbench", dependencies: [
            "ReelProtocol", "ReelCore", "ReelAgent",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),

        // Single-threaded compositor benchmark (ops/bench-compositor.sh runs it in release).
        .executableTarget(name: "reel-bench", dependencies: ["ReelKernels", "ReelMedia", "ReelCore"], path: "Sources/reel-bench"),
        // `@Suite(.blocking)`: suites whose tests block run on threads of their own, off the cooperative pool.
        .target(name: "ReelThreadTesting"),
        .testTarget(name: "ReelCoreTests", dependencies: ["ReelCore", "ReelThreadTesting"]),
        .testTarget(name: "ReelSchedulingTests", dependencies: ["ReelScheduling", "ReelLifecycleModel", "ReelCore", "ReelThreadTesting"]),
        .testTarget(name: "ReelMediaTests", dependencies: ["ReelMedia", "ReelKernels", "ReelAssetCache", "ReelCore", "ReelThreadTesting"]),
        .testTarget(name: "ReelProtocolTests", dependencies: [
            "ReelProtocol", "ReelThreadTesting",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // The lifecycle stated a second time, independently, as pure values (TaskLifecycle,
        // JobLifecycle, FarmModel): the model ModelBasedStoreTests holds the store to. Test
        // support, part of no product (docs/task-lifecycle.md).
        .target(name: "ReelLifecycleModel", dependencies: ["ReelScheduling"]),
        // A real PostgreSQL for tests (ops/postgres.sh), shared by the store and coordinator tests.
        .target(name: "ReelStoreTesting", dependencies: ["ReelStore", "ReelScheduling", "ReelCore"]),
        // A minimal HTTP client for the console tests (ReelConsoleTests, ReelCoordinatorTests).
        .target(name: "ReelHTTPTesting"),
        // A logger that keeps what it is told (agent and coordinator tests).
        .target(name: "ReelLogTesting", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // The SigV4 signer against botocore (botocore_sigv4.py, Python's AWS SDK); the client
        // against a real S3-compatible server (ops/s3.sh, REEL_TEST_S3_ENDPOINT).
        .testTarget(name: "ReelObjectStoreTests", dependencies: [
            "ReelObjectStore", "ReelThreadTesting", "ReelLogTesting",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
        ], exclude: ["botocore_sigv4.py"]),
        .testTarget(name: "ReelStoreTests", dependencies: ["ReelStore", "ReelStoreTesting", "ReelScheduling", "ReelLifecycleModel", "ReelCore",
                                                      "ReelThreadTesting"]),
        .testTarget(name: "ReelConsoleTests", dependencies: [
            "ReelConsole", "ReelCore", "ReelProtocol", "ReelHTTPTesting", "ReelThreadTesting", "ReelLogTesting",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        .testTarget(name: "ReelCoordinatorTests", dependencies: ["ReelStoreTesting", "ReelThreadTesting",
            "ReelCoordinator", "ReelStore", "ReelScheduling", "ReelProtocol", "ReelCore", "ReelKernels", "ReelMedia", "ReelConsole", "ReelHTTPTesting", "ReelLogTesting",
            "ReelObjectStore", "ReelAgent",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        .testTarget(name: "ReelAgentTests", dependencies: [
            "ReelAgent", "ReelProtocol", "ReelScheduling", "ReelCore", "ReelMedia", "ReelLogTesting", "ReelThreadTesting", "ReelObjectStore",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        .testTarget(name: "ReelIntegrationTests", dependencies: [
            "ReelMedia", "ReelCore", "ReelProtocol", "reel", "ReelThreadTesting",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
    ]
)
