"""Shared fixtures for the tablejack test suite."""
