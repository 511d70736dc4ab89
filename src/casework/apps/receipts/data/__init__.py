"""The bundled receipts, their audit and the evaluation cases; ``make_cases`` rebuilds the cases."""
