import Foundation

/// Finds S3 credentials the usual AWS ways, first match wins:
/// 1. the environment: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, with
///    `AWS_SESSION_TOKEN` for temporary credentials;
/// 2. the shared credentials file: `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`,
///    section `[PROFILE]`;
/// 3. the shared config file: `AWS_CONFIG_FILE`, else `~/.aws/config`, section
///    `[profile PROFILE]` (`[default]` for the default profile).
///
/// PROFILE is `AWS_PROFILE`, else `AWS_DEFAULT_PROFILE`, else `default`. A profile named
/// explicitly that no file holds is an error, not a silent fall-through to no credentials.
///
/// Errors name variables, files, profiles and line numbers, never a value: a malformed line
/// may hold a secret.
public struct CredentialChain: Sendable {
    public var environment: [String: String]
    /// Reads a whole file, or `nil` when it does not exist. Injected for tests.
    public var readFile: @Sendable (String) -> String?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment,
                readFile: @escaping @Sendable (String) -> String? = { path in
                    FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
                }) {
        self.environment = environment
        self.readFile = readFile
    }

    /// The first credentials found (see the type's documentation).
    /// - Throws: `ObjectStoreError` with code `.credentials` saying what to set.
    public func resolve() throws -> S3Credentials {
        if let found = try fromEnvironment() { return found }
        let profile = nonEmpty("AWS_PROFILE") ?? nonEmpty("AWS_DEFAULT_PROFILE")
        let name = profile ?? "default"
        let home = nonEmpty("HOME") ?? NSHomeDirectory()
        let credentialsFile = nonEmpty("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials"
        let configFile = nonEmpty("AWS_CONFIG_FILE") ?? home + "/.aws/config"

        if let text = readFile(credentialsFile),
           let found = try Self.credentials(in: try SharedConfigFile.parse(text, path: credentialsFile),
                                            section: name, path: credentialsFile) {
            return found
        }
        if let text = readFile(configFile),
           let found = try Self.credentials(in: try SharedConfigFile.parse(text, path: configFile),
                                            section: name == "default" ? "default" : "profile " + name, path: configFile) {
            return found
        }
        if let profile {
            throw ObjectStoreError(.credentials, "no credentials for the AWS profile \(profile) (from AWS_PROFILE or AWS_DEFAULT_PROFILE) "
                                   + "in \(credentialsFile) or \(configFile); add a [\(profile)] section with aws_access_key_id "
                                   + "and aws_secret_access_key, or unset the variable")
        }
        throw ObjectStoreError(.credentials, "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                               + "or put them in \(credentialsFile) under [default] (aws_access_key_id, aws_secret_access_key)")
    }

    private func nonEmpty(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    private func fromEnvironment() throws -> S3Credentials? {
        let key = nonEmpty("AWS_ACCESS_KEY_ID"), secret = nonEmpty("AWS_SECRET_ACCESS_KEY")
        switch (key, secret) {
        case let (key?, secret?):
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: nonEmpty("AWS_SESSION_TOKEN"))
        case (nil, nil):
            return nil
        case (_?, nil):
            throw ObjectStoreError(.credentials, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; set both, or neither to use the credentials file")
        case (nil, _?):
            throw ObjectStoreError(.credentials, "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not; set both, or neither to use the credentials file")
        }
    }

    /// The credentials in `section`, `nil` when the file has no such section or it holds no key.
    static func credentials(in file: SharedConfigFile, section: String, path: String) throws -> S3Credentials? {
        guard let values = file.sections[section] else { return nil }
        let key = values["aws_access_key_id"].flatMap { $0.isEmpty ? nil : $0 }
        let secret = values["aws_secret_access_key"].flatMap { $0.isEmpty ? nil : $0 }
        switch (key, secret) {
        case let (key?, secret?):
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: values["aws_session_token"])
        case (nil, nil):
            return nil
        default:
            throw ObjectStoreError(.credentials, "\(path) [\(section)]: needs both aws_access_key_id and aws_secret_access_key")
        }
    }
}

/// The AWS shared credentials/config file format: INI sections `[name]` of `key = value` lines;
/// `#` and `;` start comment lines; names are case-sensitive, keys are lower-cased. An indented
/// line continues a nested value (as in `s3 =` blocks of the config file) and is ignored here.
struct SharedConfigFile: Equatable {
    var sections: [String: [String: String]]

    static func parse(_ text: String, path: String) throws -> SharedConfigFile {
        var sections: [String: [String: String]] = [:]
        var current: String?
        // `isNewline` splits at "\n", "\r\n" (one Character in Swift) and "\r".
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if let first = line.first, first == " " || first == "\t" { continue }  // a nested value's sub-line
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else {
                    throw ObjectStoreError(.credentials, "\(path) line \(index + 1): a section header must end with ]")
                }
                let name = trimmed.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                current = name
                sections[name, default: [:]] = sections[name, default: [:]]
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ObjectStoreError(.credentials, "\(path) line \(index + 1): expected key = value")
            }
            guard let section = current else {
                throw ObjectStoreError(.credentials, "\(path) line \(index + 1): a setting before any [section]")
            }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[section]![key] = value
        }
        return SharedConfigFile(sections: sections)
    }
}
