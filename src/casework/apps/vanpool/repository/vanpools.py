"""The roster: employees, their shifts, vanpools and riders."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from casework.apps.vanpool.models import (
    Employee,
    Vanpool,
)
from casework.apps.vanpool.repository.transaction import TransactionScope
from casework.apps.vanpool.tables import (
    CaseRow,
    EmployeeRow,
    RiderRow,
    ShiftRow,
    VanpoolRow,
)
from casework.errors import NotFoundError


def _employee(row: EmployeeRow, shift: ShiftRow | None) -> Employee:
    return Employee(
        employee_id=row.employee_id,
        name=row.name,
        email=row.email,
        home_zip=row.home_zip,
        home_lat=row.home_lat,
        home_lng=row.home_lng,
        site=row.site,
        shift_id=shift.shift_id if shift else None,
        shift_name=shift.name if shift else None,
        shift_spec=shift.spec if shift else None,
        timezone=shift.timezone if shift else None,
        pto=row.pto,
    )


class RosterStore(TransactionScope):
    """Employees, vanpools and riders."""

    def upsert_roster(
        self,
        shifts: Sequence[dict[str, Any]],
        employees: Sequence[dict[str, Any]],
        vanpools: Sequence[dict[str, Any]],
        riders: Sequence[tuple[str, str]],
        now: datetime,
        *,
        dry_run: bool = False,
    ) -> dict[str, int]:
        """Insert or update the roster in one transaction (validated rows from ``roster``);
        ``dry_run`` rolls it back, so the counts say what an import would add."""
        counts = {"shifts": 0, "employees": 0, "vanpools": 0, "riders": 0}
        with self.session() as s:
            shift_pk: dict[str, int] = {}
            for sh in shifts:
                row = s.scalar(select(ShiftRow).where(ShiftRow.shift_id == sh["shift_id"]))
                if row is None:
                    row = ShiftRow(**sh)
                    s.add(row)
                    counts["shifts"] += 1
                else:
                    row.name, row.spec, row.timezone = sh["name"], sh["spec"], sh["timezone"]
                s.flush()
                shift_pk[sh["shift_id"]] = row.id
            emp_pk: dict[str, int] = {}
            for e in employees:
                data = {k: v for k, v in e.items() if k != "shift_id"}
                data["shift_pk"] = shift_pk[e["shift_id"]] if e["shift_id"] else None
                row = s.scalar(
                    select(EmployeeRow).where(EmployeeRow.employee_id == e["employee_id"])
                )
                if row is None:
                    row = EmployeeRow(**data, updated_at=now)
                    s.add(row)
                    counts["employees"] += 1
                else:
                    for k, v in data.items():
                        setattr(row, k, v)
                    row.updated_at = now
                s.flush()
                emp_pk[e["employee_id"]] = row.id
            vp_pk: dict[str, int] = {}
            for v in vanpools:
                row = s.scalar(select(VanpoolRow).where(VanpoolRow.vanpool_id == v["vanpool_id"]))
                if row is None:
                    row = VanpoolRow(**v)
                    s.add(row)
                    counts["vanpools"] += 1
                else:
                    for k, val in v.items():
                        setattr(row, k, val)
                s.flush()
                vp_pk[v["vanpool_id"]] = row.id
            for vanpool_id, employee_id in riders:
                if employee_id not in emp_pk:
                    emp_pk[employee_id] = self._employee_pk(s, employee_id)
                existing = s.scalar(
                    select(RiderRow).where(
                        RiderRow.vanpool_pk == vp_pk[vanpool_id],
                        RiderRow.employee_pk == emp_pk[employee_id],
                    )
                )
                if existing is None:
                    s.add(
                        RiderRow(
                            vanpool_pk=vp_pk[vanpool_id],
                            employee_pk=emp_pk[employee_id],
                            joined_at=now,
                        )
                    )
                    counts["riders"] += 1
            if dry_run:
                s.rollback()
        return counts

    def _employee_pk(self, s: Session, employee_id: str) -> int:
        pk = s.scalar(select(EmployeeRow.id).where(EmployeeRow.employee_id == employee_id))
        if pk is None:
            raise NotFoundError(f"Employee {employee_id} does not exist; import it first.")
        return pk

    def get_employee(self, employee_id: str) -> Employee:
        with self.session() as s:
            row = s.execute(
                select(EmployeeRow, ShiftRow)
                .outerjoin(ShiftRow, ShiftRow.id == EmployeeRow.shift_pk)
                .where(EmployeeRow.employee_id == employee_id)
            ).first()
            if row is None:
                raise NotFoundError(f"Employee {employee_id} does not exist.")
            return _employee(*row)

    def update_employee(self, employee_id: str, now: datetime, **changes: Any) -> Employee:
        """Change an employee's home or PTO (what the employee portal would write)."""
        with self.session() as s:
            row = s.scalar(select(EmployeeRow).where(EmployeeRow.employee_id == employee_id))
            if row is None:
                raise NotFoundError(f"Employee {employee_id} does not exist.")
            for k, v in changes.items():
                setattr(row, k, v)
            row.updated_at = now
        return self.get_employee(employee_id)

    def vanpool_ids(self) -> list[str]:
        with self.session() as s:
            return list(s.scalars(select(VanpoolRow.vanpool_id).order_by(VanpoolRow.vanpool_id)))

    def get_vanpool(self, vanpool_id: str) -> Vanpool:
        """The vanpool with its current riders (cancelled memberships left out)."""
        with self.session() as s:
            vp = s.scalar(select(VanpoolRow).where(VanpoolRow.vanpool_id == vanpool_id))
            if vp is None:
                raise NotFoundError(f"Vanpool {vanpool_id} does not exist.")
            rows = s.execute(
                select(EmployeeRow, ShiftRow)
                .join(RiderRow, RiderRow.employee_pk == EmployeeRow.id)
                .outerjoin(ShiftRow, ShiftRow.id == EmployeeRow.shift_pk)
                .where(RiderRow.vanpool_pk == vp.id, RiderRow.removed_at.is_(None))
                .order_by(EmployeeRow.employee_id)
            ).all()
            return Vanpool(
                vanpool_id=vp.vanpool_id,
                work_site=vp.work_site,
                pickup_zip=vp.pickup_zip,
                pickup_lat=vp.pickup_lat,
                pickup_lng=vp.pickup_lng,
                departure_time=vp.departure_time,
                return_time=vp.return_time,
                timezone=vp.timezone,
                max_commute_miles=vp.max_commute_miles,
                riders=[_employee(e, sh) for e, sh in rows],
            )

    def remove_rider(self, vanpool_id: str, employee_id: str, now: datetime) -> bool:
        """End a membership; False when it was already ended (idempotent)."""
        with self.session() as s:
            rider = s.scalar(
                select(RiderRow)
                .join(VanpoolRow, VanpoolRow.id == RiderRow.vanpool_pk)
                .join(EmployeeRow, EmployeeRow.id == RiderRow.employee_pk)
                .where(VanpoolRow.vanpool_id == vanpool_id, EmployeeRow.employee_id == employee_id)
            )
            if rider is None:
                raise NotFoundError(f"{employee_id} is not a rider of {vanpool_id}.")
            if rider.removed_at is not None:
                return False
            rider.removed_at = now
            return True

    def counts(self) -> dict[str, int]:
        with self.session() as s:
            return {
                "employees": s.scalar(select(func.count()).select_from(EmployeeRow)) or 0,
                "vanpools": s.scalar(select(func.count()).select_from(VanpoolRow)) or 0,
                "riders": s.scalar(
                    select(func.count()).select_from(RiderRow).where(RiderRow.removed_at.is_(None))
                )
                or 0,
                "cases": s.scalar(select(func.count()).select_from(CaseRow)) or 0,
            }
