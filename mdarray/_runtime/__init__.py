"""What a user sets and sees for a run: options (fallback policy, transfer guard, warnings) and `profile`."""
