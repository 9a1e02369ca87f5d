/// Placeholder until the conformance kit lands.
enum ConformancePlaceholder {}
