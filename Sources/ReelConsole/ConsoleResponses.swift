import Foundation
import Hummingbird

/// JSON bodies and error answers of the console's API. Documents are encoded like the
/// coordinator encodes `STATUS` (sorted keys), so the API and `reel status --json` agree byte for byte.
enum ConsoleResponses {
    struct ErrorDocument: Encodable {
        var error: String
        /// Every problem, when there are several (a batch's invalid rows).
        var problems: [String]? = nil
    }

    static func encode(_ value: some Encodable) throws -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ByteBuffer(bytes: try encoder.encode(value))
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: try encode(value)))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String, problems: [String]? = nil, headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        headers.append(contentsOf: extra)
        let body = (try? encode(ErrorDocument(error: message, problems: problems))) ?? ByteBuffer(string: "{}")
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    static func unauthorized(_ message: String) -> Response {
        error(.unauthorized, message, headers: [.wwwAuthenticate: "Bearer realm=\"reel\""])
    }

    static func text(_ text: String, contentType: String, cache: Bool = false) -> Response {
        Response(status: .ok, headers: [.contentType: contentType, .cacheControl: cache ? "max-age=300" : "no-cache",
                                        .xContentTypeOptions: "nosniff"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func jpeg(_ bytes: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A playlist or media segment of the preview: never stored (the playlist grows; a chunk
    /// may be rendered again), never sniffed.
    static func media(_ bytes: [UInt8], contentType: String) -> Response {
        Response(status: .ok, headers: [.contentType: contentType, .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The dashboard page: only its own script, style and API; never framed.
    static func page(_ html: String) -> Response {
        Response(status: .ok, headers: [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-cache", .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; media-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
