import Foundation
import Testing

/// deploy/'s manifests, checked as CI can without a cluster (deploy/check.py): the Kubernetes
/// objects and compose services consistent with each other, and the autoscaling overlay's KEDA
/// objects valid against KEDA's own CRD schemas, vendored in deploy/schemas/.
@Suite(.blocking) struct DeployManifestTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy")

    @Test func theManifestsPassTheirChecks() throws {
        let result = try Media.run("env", ["python3", Self.deploy.appendingPathComponent("check.py").path], allowFailure: true)
        let summary = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0, "\(summary)\(result.stderr)")
        #expect(summary.contains(" 0 problems"), "\(summary)")
    }

    /// The check can fail: a ScaledObject with a value KEDA's schema refuses is reported.
    @Test func aScaledObjectKEDAWouldRefuseIsReported() throws {
        let copy = try Media.tempDirectory().appendingPathComponent("deploy")
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        try FileManager.default.copyItem(at: Self.deploy, to: copy)
        let scaled = copy.appendingPathComponent("k8s-autoscaling/scaledobject.yaml")
        let text = try String(contentsOf: scaled, encoding: .utf8)
        #expect(text.contains("  minReplicaCount: 0\n"))
        try text.replacingOccurrences(of: "  minReplicaCount: 0\n", with: "  minReplicaCount: none\n").write(to: scaled, atomically: true, encoding: .utf8)
        let result = try Media.run("env", ["python3", copy.appendingPathComponent("check.py").path], allowFailure: true)
        #expect(result.status == 1)
        #expect(result.stderr.contains("spec.minReplicaCount: 'none' is not of type 'integer'"), "\(result.stderr)")
    }
}
