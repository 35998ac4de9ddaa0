package store

import (
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// registerUUID gives a connection's type map a direct path for github.com/google/uuid.
//
// pgx knows uuid.UUID only as a driver.Valuer and sql.Scanner: each parameter went through
// Value (a string), a failed binary encode (an error value built and dropped), a text scan
// and a second encode; each result column through a formatted string parsed back. About a
// third of the allocations of a suspend → resume cycle were that. uuidCodec handles
// uuid.UUID, *uuid.UUID and uuid.NullUUID itself in both formats (uuid[] arrays through
// the element codec) and leaves every other value to pgx's UUIDCodec, so its behaviour
// (rows.Values still gives [16]byte) is unchanged.
func registerUUID(m *pgtype.Map) {
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
	// Parameters of unknown OID (simple protocol, exec mode) are typed by their Go value.
	m.RegisterDefaultPgType(uuid.UUID{}, "uuid")
	m.RegisterDefaultPgType(uuid.NullUUID{}, "uuid")
	m.RegisterDefaultPgType([]uuid.UUID(nil), "_uuid")
}

type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	switch value.(type) {
	case uuid.UUID, *uuid.UUID, uuid.NullUUID:
		if format == pgtype.BinaryFormatCode {
			return encodeUUID{}
		}
		return encodeUUID{text: true}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	switch target.(type) {
	case *uuid.UUID, *uuid.NullUUID:
		return scanUUID{text: format == pgtype.TextFormatCode}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeUUID struct{ text bool }

func (p encodeUUID) Encode(value any, buf []byte) ([]byte, error) {
	var u uuid.UUID
	switch v := value.(type) {
	case uuid.UUID:
		u = v
	case *uuid.UUID:
		if v == nil {
			return nil, nil
		}
		u = *v
	case uuid.NullUUID:
		if !v.Valid {
			return nil, nil
		}
		u = v.UUID
	default:
		return nil, fmt.Errorf("uuid codec: cannot encode %T", value)
	}
	if !p.text {
		return append(buf, u[:]...), nil
	}
	// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, appended without a String allocation.
	n := len(buf)
	buf = append(buf, "00000000-0000-0000-0000-000000000000"...)
	d := buf[n:]
	hex.Encode(d[0:8], u[0:4])
	hex.Encode(d[9:13], u[4:6])
	hex.Encode(d[14:18], u[6:8])
	hex.Encode(d[19:23], u[8:10])
	hex.Encode(d[24:], u[10:])
	return buf, nil
}

type scanUUID struct{ text bool }

func (p scanUUID) Scan(src []byte, dst any) error {
	var u uuid.UUID
	if src != nil {
		if p.text {
			var err error
			if u, err = uuid.ParseBytes(src); err != nil {
				return err
			}
		} else {
			if len(src) != 16 {
				return fmt.Errorf("invalid length for uuid: %d", len(src))
			}
			copy(u[:], src)
		}
	}
	switch d := dst.(type) {
	case *uuid.UUID:
		*d = u // NULL is the zero UUID, as uuid.UUID.Scan(nil) made it
	case *uuid.NullUUID:
		*d = uuid.NullUUID{UUID: u, Valid: src != nil}
	default:
		return fmt.Errorf("uuid codec: cannot scan into %T", dst)
	}
	return nil
}
