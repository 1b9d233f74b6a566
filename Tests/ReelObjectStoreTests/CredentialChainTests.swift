import Foundation
import ReelObjectStore
import Testing
import ReelThreadTesting

/// Where credentials come from, in AWS's order, and that a secret never prints.
@Suite(.blocking) struct CredentialChainTests {
    static let secret = "s3cr3t/VALUE+that=must-never-print"

    /// A chain over an environment and a set of files held in memory.
    static func chain(_ environment: [String: String], files: [String: String] = [:]) -> CredentialChain {
        CredentialChain(environment: ["HOME": "/home/reel"].merging(environment) { $1 }, readFile: { files[$0] })
    }

    @Test("the environment comes first, session token included")
    func environmentFirst() throws {
        let found = try Self.chain(["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": Self.secret, "AWS_SESSION_TOKEN": "tok"],
                                   files: ["/home/reel/.aws/credentials": "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = x\n"])
            .resolve()
        #expect(found.accessKeyID == "ENVKEY")
        #expect(found.secretAccessKey.revealed == Self.secret)
        #expect(found.sessionToken?.revealed == "tok")
    }

    @Test("half of the environment's pair is an error that names the missing variable")
    func partialEnvironment() {
        #expect { try Self.chain(["AWS_ACCESS_KEY_ID": "ENVKEY"]).resolve() } throws: { error in
            "\(error)".contains("AWS_SECRET_ACCESS_KEY is not")
        }
        #expect { try Self.chain(["AWS_SECRET_ACCESS_KEY": Self.secret]).resolve() } throws: { error in
            "\(error)".contains("AWS_ACCESS_KEY_ID is not") && !"\(error)".contains(Self.secret)
        }
    }

    @Test("the shared credentials file: default profile, comments, spacing, CRLF")
    func credentialsFileDefault() throws {
        let file = "# a comment\r\n; another\r\n[other]\r\naws_access_key_id=OTHER\r\naws_secret_access_key=o\r\n\r\n"
            + "[default]\r\n  \r\nAWS_Access_Key_ID   =   FILEKEY  \r\naws_secret_access_key= \(Self.secret)\r\n"
        let found = try Self.chain([:], files: ["/home/reel/.aws/credentials": file]).resolve()
        #expect(found.accessKeyID == "FILEKEY")
        #expect(found.secretAccessKey.revealed == Self.secret)
        #expect(found.sessionToken == nil)
    }

    @Test("AWS_PROFILE and AWS_SHARED_CREDENTIALS_FILE choose the section and the file")
    func profileAndFile() throws {
        let file = "[default]\naws_access_key_id = D\naws_secret_access_key = d\n[render farm]\naws_access_key_id = FARM\n"
            + "aws_secret_access_key = f\naws_session_token = t\n"
        let found = try Self.chain(["AWS_PROFILE": "render farm", "AWS_SHARED_CREDENTIALS_FILE": "/etc/reel/aws"],
                                   files: ["/etc/reel/aws": file]).resolve()
        #expect(found.accessKeyID == "FARM")
        #expect(found.sessionToken?.revealed == "t")
    }

    @Test("the config file's [profile NAME] section is the last resort")
    func configFile() throws {
        let config = "[default]\nregion = eu-west-3\n[profile farm]\nregion = eu-west-3\ns3 =\n  addressing_style = path\n"
            + "aws_access_key_id = CONFIGKEY\naws_secret_access_key = c\n"
        let found = try Self.chain(["AWS_PROFILE": "farm"], files: ["/home/reel/.aws/config": config]).resolve()
        #expect(found.accessKeyID == "CONFIGKEY")
    }

    @Test("a named profile that no file has is an error naming it")
    func missingProfile() {
        #expect { try Self.chain(["AWS_PROFILE": "nope"], files: ["/home/reel/.aws/credentials": "[default]\n"]).resolve() } throws: { error in
            (error as? ObjectStoreError)?.code == .credentials && "\(error)".contains("profile nope")
        }
    }

    @Test("no credentials anywhere says what to set")
    func nothing() {
        #expect { try Self.chain([:]).resolve() } throws: { error in
            "\(error)".contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
    }

    @Test("a malformed file names the line, never its text")
    func malformed() {
        let pasted = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY"  // a secret pasted alone on a line
        let file = "[default]\naws_access_key_id = K\n\(pasted)\n"
        #expect { try Self.chain([:], files: ["/home/reel/.aws/credentials": file]).resolve() } throws: { error in
            "\(error)".contains("line 3") && !"\(error)".contains(pasted)
        }
        #expect { try Self.chain([:], files: ["/home/reel/.aws/credentials": "[default]\naws_secret_access_key = \(Self.secret)\n"]).resolve() }
            throws: { error in "\(error)".contains("needs both") && !"\(error)".contains(Self.secret) }
    }

    @Test("credentials print their key id only, however they are printed")
    func redaction() {
        let credentials = S3Credentials(accessKeyID: "AKID", secretAccessKey: Self.secret, sessionToken: "session-token-value")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in ["\(credentials)", String(reflecting: credentials), dumped, "\([credentials])", "\(credentials.secretAccessKey)",
                     String(describing: Optional(credentials.secretAccessKey)), "\(SigV4Signer(credentials: credentials, region: "r"))"] {
            #expect(!text.contains(Self.secret), "\(text)")
            #expect(!text.contains("session-token-value"), "\(text)")
        }
        #expect("\(credentials)".contains("AKID"))
    }
}
