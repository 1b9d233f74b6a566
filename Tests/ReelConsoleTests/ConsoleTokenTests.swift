import Foundation
import ReelProtocol
import Testing
@testable import ReelConsole
import ReelThreadTesting

@Suite(.blocking) struct ConsoleTokenTests {
    static let farm = try! Authenticator(secret: Array("the farm's shared secret, 32 byte".utf8))
    static let otherFarm = try! Authenticator(secret: Array("another farm's secret, also long".utf8))

    @Test func aTokenCarriesItsRoleAndExpiry() async throws {
        let tokens = await ConsoleTokens.make(authenticator: Self.farm)
        let now = Date()
        let token = try await tokens.issue(role: .operator_, subject: "alice@studio", lifetime: .seconds(3600), now: now)
        let access = try await tokens.verify(token)
        #expect(access.role == .operator_ && access.role.canAct)
        #expect(access.subject == "alice@studio")
        #expect(abs(access.expiresAtMillis - Int64((now.timeIntervalSince1970 + 3600) * 1000)) < 1500)
        let readOnly = try await tokens.verify(try await tokens.issue(role: .readOnly, subject: "bob", lifetime: .seconds(60)))
        #expect(readOnly.role == .readOnly && !readOnly.role.canAct)
        // A JWT (three base64url parts), HS256, and the secret appears nowhere in it.
        let parts = token.split(separator: ".")
        #expect(parts.count == 3)
        let header = try #require(Data(base64URL: String(parts[0])).flatMap { String(data: $0, encoding: .utf8) })
        #expect(header.contains("\"HS256\""))
        #expect(!token.contains("secret"))
    }

    @Test func aTamperedTokenIsRefused() async throws {
        let tokens = await ConsoleTokens.make(authenticator: Self.farm)
        let token = try await tokens.issue(role: .readOnly, subject: "eve", lifetime: .seconds(3600))
        let parts = token.split(separator: ".").map(String.init)
        // Same signature, payload promoted to operator.
        var payload = try #require(Data(base64URL: parts[1]).flatMap { String(data: $0, encoding: .utf8) })
        payload = payload.replacingOccurrences(of: "\"read-only\"", with: "\"operator\"")
        let forged = [parts[0], Data(payload.utf8).base64URLEncoded(), parts[2]].joined(separator: ".")
        await #expect(throws: ConsoleTokenError.self) { try await tokens.verify(forged) }
        do { _ = try await tokens.verify(forged) } catch { #expect(error.description.contains("signature")) }
        // One character of the signature changed.
        var signature = Array(parts[2])
        signature[4] = signature[4] == "A" ? "B" : "A"
        await #expect(throws: ConsoleTokenError.self) { try await tokens.verify([parts[0], parts[1], String(signature)].joined(separator: ".")) }
        // No signature at all ("alg": "none").
        let none = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64URLEncoded()
        await #expect(throws: ConsoleTokenError.self) { try await tokens.verify("\(none).\(parts[1]).") }
        await #expect(throws: ConsoleTokenError.self) { try await tokens.verify("not a token") }
        await #expect(throws: ConsoleTokenError.self) { try await tokens.verify("") }
    }

    @Test func anExpiredTokenIsRefusedSayingSo() async throws {
        let tokens = await ConsoleTokens.make(authenticator: Self.farm)
        let token = try await tokens.issue(role: .operator_, subject: "alice", lifetime: .seconds(60), now: Date().addingTimeInterval(-3600))
        do {
            _ = try await tokens.verify(token)
            Issue.record("an expired token was accepted")
        } catch {
            #expect(error.description.contains("expired"), "\(error)")
        }
    }

    @Test func anotherFarmsTokenIsRefused() async throws {
        let ours = await ConsoleTokens.make(authenticator: Self.farm)
        let theirs = await ConsoleTokens.make(authenticator: Self.otherFarm)
        let token = try await theirs.issue(role: .operator_, subject: "mallory", lifetime: .seconds(3600))
        do {
            _ = try await ours.verify(token)
            Issue.record("another farm's token was accepted")
        } catch {
            #expect(error.description.contains("signature"), "\(error)")
        }
    }

    @Test func theSigningKeyIsDerivedNotTheSecret() throws {
        let secret = Array("the farm's shared secret, 32 byte".utf8)
        let key = Self.farm.derivedKey(label: ConsoleTokens.keyLabel)
        #expect(key.count == 32)
        #expect(key != secret && key != Array(secret.prefix(32)))
        #expect(key == Self.farm.derivedKey(label: ConsoleTokens.keyLabel))
        #expect(key != Self.farm.derivedKey(label: "another use"))
        #expect(key != Self.otherFarm.derivedKey(label: ConsoleTokens.keyLabel))
    }

    @Test(arguments: [("30m", 1800), ("12h", 43_200), ("7d", 604_800), ("2w", 1_209_600), ("90", 90), ("366d", 31_622_400)])
    func lifetimes(_ text: String, _ seconds: Int64) {
        #expect(ConsoleTokens.parseLifetime(text) == .seconds(seconds))
    }

    @Test(arguments: ["", "0", "-5m", "12x", "h", "367d", "1.5h", "99999999999999999999d"])
    func badLifetimes(_ text: String) {
        #expect(ConsoleTokens.parseLifetime(text) == nil)
    }
}

extension Data {
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }

    func base64URLEncoded() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
