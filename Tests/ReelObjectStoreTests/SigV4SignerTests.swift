import Crypto
import Foundation
import ReelObjectStore
import ReelThreadTesting
import Testing

/// The signer against botocore (Python's AWS SDK), which signs the same requests independently:
/// header signing, presigning with botocore's signer classes, and presigned URLs that a real
/// botocore S3 client builds from an operation and its parameters. Plus AWS's own published
/// examples, and the date and encoding rules on their own.
@Suite(.blocking)
struct SigV4SignerTests {
    static let accessKey = "AKIDEXAMPLE"
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    /// Keys with every character class that trips encoders: spaces, `+`, `=`, `~`, `/`, `%`,
    /// `?`, `#`, `&`, reserved punctuation, composed and decomposed accents, CJK, an emoji,
    /// doubled and dot segments (S3 paths are never normalised).
    static let unusualKeys = [
        "reel/assets/sha256/9f/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "a b/c+d=e~f.mp4",
        "dir/ü é/e\u{301}/加点水印.mov",
        "100% sure?#frag&x=1",
        "!*'();:@$,[]{}|\\^`\"<>.txt",
        "emoji 🎬/clip.mp4",
        "a//b/./c/../d",
        "trailing/slash/",
    ]

    /// One request, described for both signers.
    struct Case: CustomStringConvertible {
        enum Kind: String { case sign, presign, clientPresign = "client-presign" }
        var name: String
        var kind: Kind
        var method: String
        var endpoint = "http://127.0.0.1:8333"
        var bucket = "reel-test"
        var key: String? = "clip.mp4"
        var query: [String: String] = [:]
        var headers: [String: String] = [:]
        var body: [UInt8] = []
        var unsignedPayload = false
        var timestamp = "20261125T184831Z"
        var token: String?
        var region = "us-east-1"
        var expires = 900
        /// For client presigning: botocore's operation name and parameters.
        var operation: String?
        var params: [String: Any] = [:]

        var description: String { name }

        var json: [String: Any] {
            var object: [String: Any] = [
                "kind": kind.rawValue, "method": method, "endpoint": endpoint, "bucket": bucket, "key": key ?? NSNull(),
                "query": query, "headers": headers, "body_hex": body.map { String(format: "%02x", $0) }.joined(),
                "unsigned_payload": unsignedPayload, "timestamp": timestamp, "access_key": SigV4SignerTests.accessKey,
                "secret_key": SigV4SignerTests.secret, "region": region, "expires": expires,
            ]
            if let token { object["token"] = token }
            if let operation { object["operation"] = operation; object["params"] = params }
            return object
        }

        func request() throws -> SignableRequest {
            let endpoint = try S3Endpoint(endpoint)
            if let key {
                return SignableRequest(method: method, endpoint: endpoint, bucket: bucket, key: key, query: query, headers: headers)
            }
            return SignableRequest(method: method, endpoint: endpoint, path: SigV4Encoding.bucketPath(bucket), query: query, headers: headers)
        }

        var signer: SigV4Signer {
            SigV4Signer(credentials: S3Credentials(accessKeyID: SigV4SignerTests.accessKey, secretAccessKey: SigV4SignerTests.secret,
                                                   sessionToken: token),
                        region: region)
        }
    }

    static let payload = Array("the quick brown fox jumps over the lazy dog\n".utf8)

    static var cases: [Case] {
        var cases: [Case] = [
            Case(name: "GET, empty body", kind: .sign, method: "GET"),
            Case(name: "GET with a Range", kind: .sign, method: "GET", headers: ["Range": "bytes=1048576-2097151"]),
            Case(name: "HEAD with checksum mode", kind: .sign, method: "HEAD", headers: ["x-amz-checksum-mode": "ENABLED"]),
            Case(name: "DELETE", kind: .sign, method: "DELETE"),
            Case(name: "PUT with a body, checksum and content type", kind: .sign, method: "PUT",
                 headers: ["Content-Type": "video/mp4", "x-amz-checksum-sha256": base64SHA256(payload)], body: payload),
            Case(name: "PUT with an unsigned payload", kind: .sign, method: "PUT", body: payload, unsignedPayload: true),
            Case(name: "session token", kind: .sign, method: "GET", token: "FQoGZXIvYXdzEXAMPLE//token+with/slashes=="),
            Case(name: "header value white space", kind: .sign, method: "PUT",
                 headers: ["x-amz-meta-note": "  several   inner\tspaces  ", "X-Amz-Meta-Upper": "Case"]),
            Case(name: "CreateMultipartUpload (a flag query)", kind: .sign, method: "POST", query: ["uploads": ""]),
            Case(name: "UploadPart", kind: .sign, method: "PUT",
                 query: ["partNumber": "2", "uploadId": "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA--/+="], body: payload),
            Case(name: "ListObjectsV2 page", kind: .sign, method: "GET", key: nil,
                 query: ["list-type": "2", "prefix": "reel/results/", "max-keys": "1000",
                         "continuation-token": "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=", "start-after": "a b+c"]),
            Case(name: "another region", kind: .sign, method: "GET", region: "eu-west-3"),
            Case(name: "https on its default port", kind: .sign, method: "GET", endpoint: "https://s3.eu-west-3.amazonaws.com"),
            Case(name: "http on port 80, upper-case host", kind: .sign, method: "GET", endpoint: "http://S3.Example.COM:80"),
            Case(name: "IPv6 loopback", kind: .sign, method: "GET", endpoint: "http://[::1]:8333"),
            Case(name: "date at a year boundary", kind: .sign, method: "GET", timestamp: "20261231T235959Z"),

            Case(name: "presigned GET", kind: .presign, method: "GET"),
            Case(name: "presigned PUT", kind: .presign, method: "PUT"),
            Case(name: "presigned PUT bound to a SHA-256 checksum", kind: .presign, method: "PUT",
                 headers: ["x-amz-checksum-sha256": base64SHA256(payload)]),
            Case(name: "presigned UploadPart", kind: .presign, method: "PUT", query: ["partNumber": "7", "uploadId": "abc/def+ghi="]),
            Case(name: "presigned GET with a session token", kind: .presign, method: "GET", token: "IQoJb3JpZ2luX2VjE/tok+en="),
            Case(name: "presigned, 7 days", kind: .presign, method: "GET", expires: 604_800),
            Case(name: "presigned, 1 second", kind: .presign, method: "GET", expires: 1),
        ]
        for (index, key) in unusualKeys.enumerated() {
            cases.append(Case(name: "signed PUT of unusual key \(index)", kind: .sign, method: "PUT", key: key, body: payload))
            cases.append(Case(name: "presigned GET of unusual key \(index)", kind: .presign, method: "GET", key: key))
            cases.append(Case(name: "botocore client GetObject URL, unusual key \(index)", kind: .clientPresign, method: "GET", key: key,
                              operation: "get_object", params: ["Bucket": "reel-test", "Key": key]))
        }
        cases += [
            Case(name: "botocore client PutObject URL", kind: .clientPresign, method: "PUT", key: "reel/results/ab/abcdef",
                 operation: "put_object", params: ["Bucket": "reel-test", "Key": "reel/results/ab/abcdef"]),
            Case(name: "botocore client UploadPart URL", kind: .clientPresign, method: "PUT", key: "big file+1.mov",
                 query: ["partNumber": "3", "uploadId": "2~upload/id+="], expires: 300,
                 operation: "upload_part", params: ["Bucket": "reel-test", "Key": "big file+1.mov", "UploadId": "2~upload/id+=", "PartNumber": 3]),
            Case(name: "botocore client GetObject URL with a session token", kind: .clientPresign, method: "GET",
                 token: "FwoGZXIvYXdzE/session+token=", operation: "get_object", params: ["Bucket": "reel-test", "Key": "clip.mp4"]),
        ]
        return cases
    }

    static func base64SHA256(_ bytes: [UInt8]) -> String { Data(SHA256.hash(data: bytes)).base64EncodedString() }
    static func hexSHA256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test("every case signs exactly as botocore signs it")
    func matchesBotocore() throws {
        let cases = Self.cases
        let results = try Botocore.sign(cases.map(\.json))
        for (testCase, reference) in zip(cases, results) {
            let date = try #require(AmzDate(timestamp: testCase.timestamp))
            switch testCase.kind {
            case .sign:
                let payload: PayloadHash = testCase.unsignedPayload ? .unsigned
                    : testCase.body.isEmpty ? .empty : .sha256(Self.hexSHA256(testCase.body))
                let signed = testCase.signer.sign(try testCase.request(), payload: payload, at: date)
                #expect(signed.canonicalRequest == reference["canonical_request"] as? String, "\(testCase)")
                #expect(signed.stringToSign == reference["string_to_sign"] as? String, "\(testCase)")
                let expected = try #require(reference["headers"] as? [String: String])
                var ours = signed.headers
                ours["host"] = nil  // botocore leaves Host to the HTTP client (it signs the same value)
                #expect(ours == expected, "\(testCase)")
            case .presign:
                let presigned = try testCase.signer.presign(try testCase.request(), expires: testCase.expires, at: date)
                #expect(presigned.canonicalRequest == reference["canonical_request"] as? String, "\(testCase)")
                #expect(presigned.stringToSign == reference["string_to_sign"] as? String, "\(testCase)")
                try Self.expectSameURL(presigned.url, try #require(reference["url"] as? String), testCase)
            case .clientPresign:
                let presigned = try testCase.signer.presign(try testCase.request(), expires: testCase.expires, at: date)
                try Self.expectSameURL(presigned.url, try #require(reference["url"] as? String), testCase)
            }
        }
    }

    /// Same origin and path byte for byte, the same query items (botocore puts the operation's
    /// parameters first; the order of a query does not change what it means or its signature).
    static func expectSameURL(_ ours: String, _ theirs: String, _ testCase: Case) throws {
        func split(_ url: String) -> (String, [String]) {
            let parts = url.split(separator: "?", maxSplits: 1).map(String.init)
            return (parts[0], parts.count > 1 ? parts[1].split(separator: "&").map(String.init).sorted() : [])
        }
        let (ourBase, ourQuery) = split(ours), (theirBase, theirQuery) = split(theirs)
        #expect(ourBase == theirBase, "\(testCase)")
        #expect(ourQuery == theirQuery, "\(testCase)")
        #expect(ourQuery.contains { $0.hasPrefix("X-Amz-Signature=") }, "\(testCase)")
    }

    // MARK: AWS's published examples (S3 API reference, "Signature Calculations")

    static let awsExampleCredentials = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                                                     secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")

    @Test("AWS's GetObject example with a Range header")
    func awsHeaderExample() throws {
        let request = SignableRequest(method: "GET", endpoint: try S3Endpoint("https://examplebucket.s3.amazonaws.com"),
                                      path: "/test.txt", headers: ["Range": "bytes=0-9"])
        let signed = SigV4Signer(credentials: Self.awsExampleCredentials, region: "us-east-1")
            .sign(request, payload: .empty, at: AmzDate(timestamp: "20130524T000000Z")!)
        #expect(signed.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(signed.signedHeaders == "host;range;x-amz-content-sha256;x-amz-date")
    }

    @Test("AWS's presigned GetObject example")
    func awsPresignExample() throws {
        let request = SignableRequest(method: "GET", endpoint: try S3Endpoint("https://examplebucket.s3.amazonaws.com"), path: "/test.txt")
        let presigned = try SigV4Signer(credentials: Self.awsExampleCredentials, region: "us-east-1")
            .presign(request, expires: 86_400, at: AmzDate(timestamp: "20130524T000000Z")!)
        #expect(presigned.url.hasSuffix("&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"))
    }

    // MARK: Rules on their own

    @Test("expiry outside 1 second ... 7 days is refused", arguments: [0, -5, 604_801])
    func expiryBounds(expires: Int) throws {
        let request = SignableRequest(method: "GET", endpoint: try S3Endpoint("http://127.0.0.1:8333"), bucket: "b", key: "k")
        let signer = SigV4Signer(credentials: Self.awsExampleCredentials, region: "us-east-1")
        #expect(throws: ObjectStoreError.self) { try signer.presign(request, expires: expires, at: AmzDate(epochSeconds: 0)) }
    }

    @Test("the default expiry is short")
    func defaultExpiry() throws {
        let request = SignableRequest(method: "GET", endpoint: try S3Endpoint("http://127.0.0.1:8333"), bucket: "b", key: "k")
        let presigned = try SigV4Signer(credentials: Self.awsExampleCredentials, region: "us-east-1")
            .presign(request, at: AmzDate(epochSeconds: 1_000_000))
        #expect(presigned.url.contains("X-Amz-Expires=900&"))
        #expect(presigned.expiresAt.epochSeconds == 1_000_900)
    }

    @Test("dates format and parse in UTC across leap years and centuries")
    func dates() {
        #expect(AmzDate(epochSeconds: 0).timestamp == "19700101T000000Z")
        #expect(AmzDate(epochSeconds: 951_782_400).timestamp == "20000229T000000Z")  // a leap day of a century leap year
        #expect(AmzDate(epochSeconds: 4_107_542_399).timestamp == "21000228T235959Z")  // 2100 is not a leap year
        #expect(AmzDate(epochSeconds: 4_107_542_400).timestamp == "21000301T000000Z")
        #expect(AmzDate(epochSeconds: 1_369_353_600).day == "20130524")
        // Round trip over many instants, checked against Foundation's Gregorian calendar.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var seconds: Int64 = -86_400 * 365
        while seconds < 4_200_000_000 {
            let date = AmzDate(epochSeconds: seconds)
            #expect(AmzDate(timestamp: date.timestamp) == date)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date.date)
            let expected = String(format: "%04d%02d%02dT%02d%02d%02dZ", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
            #expect(date.timestamp == expected)
            seconds += 7_654_321
        }
        #expect(AmzDate(timestamp: "20130524T000000") == nil)
        #expect(AmzDate(timestamp: "20131324T000000Z") == nil)
    }

    @Test("encoding keeps only unreserved characters, and slashes in paths")
    func encoding() {
        #expect(SigV4Encoding.encode("a b+c=d~e_f.g-h/i", keepSlash: true) == "a%20b%2Bc%3Dd~e_f.g-h/i")
        #expect(SigV4Encoding.encode("a b+c=d~e_f.g-h/i", keepSlash: false) == "a%20b%2Bc%3Dd~e_f.g-h%2Fi")
        #expect(SigV4Encoding.encode("ü", keepSlash: true) == "%C3%BC")
        #expect(SigV4Encoding.encode("e\u{301}", keepSlash: true) == "e%CC%81")  // never normalised to é
        #expect(SigV4Encoding.objectPath(bucket: "b", key: "x/../y") == "/b/x/../y")
    }
}
