// @roo-code/telemetry: a service whose every capture is a no-op (the agents call
// TelemetryService.instance.captureSlidingWindowTruncation inside truncateConversation).
const instance = new Proxy({}, { get: (_, key) => (key === "then" ? undefined : () => undefined) });

export class TelemetryService {
  static get instance() {
    return instance;
  }
  static hasInstance() {
    return true;
  }
  static createInstance() {
    return instance;
  }
}
