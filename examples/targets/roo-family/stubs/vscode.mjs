// vscode: nothing the history code calls at import time; every member is an inert stub.
import { stub } from "./runtime.mjs";

export default stub("vscode");
