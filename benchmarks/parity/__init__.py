"""The parity harness: SeaTunnel's engine (Zeta) against the project, config by config (docs/parity.md)."""
